package manifests

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Typed views of the fields the tests read; everything else is ignored here
// and validated strictly by the API server.

type deployment struct {
	Metadata meta `yaml:"metadata"`
	Spec     struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata meta    `yaml:"metadata"`
			Spec     podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	ServiceAccountName            string              `yaml:"serviceAccountName"`
	TerminationGracePeriodSeconds *int                `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               *podSecurityContext `yaml:"securityContext"`
	Affinity                      *struct {
		PodAntiAffinity *struct {
			Preferred []struct {
				Weight          int          `yaml:"weight"`
				PodAffinityTerm affinityTerm `yaml:"podAffinityTerm"`
			} `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
			Required []affinityTerm `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"podAntiAffinity"`
	} `yaml:"affinity"`
	InitContainers []container `yaml:"initContainers"`
	Containers     []container `yaml:"containers"`
	Volumes        []struct {
		Name     string    `yaml:"name"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type affinityTerm struct {
	TopologyKey   string `yaml:"topologyKey"`
	LabelSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"labelSelector"`
}

type podSecurityContext struct {
	RunAsNonRoot   *bool           `yaml:"runAsNonRoot"`
	RunAsUser      *int64          `yaml:"runAsUser"`
	RunAsGroup     *int64          `yaml:"runAsGroup"`
	FSGroup        *int64          `yaml:"fsGroup"`
	SeccompProfile *seccompProfile `yaml:"seccompProfile"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	StartupProbe   *probe `yaml:"startupProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	Lifecycle      *struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
			Exec *struct {
				Command []string `yaml:"command"`
			} `yaml:"exec"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext *struct {
		RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
		RunAsUser                *int64 `yaml:"runAsUser"`
		AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
		Privileged               *bool  `yaml:"privileged"`
		Capabilities             *struct {
			Add  []string `yaml:"add"`
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
		SeccompProfile *seccompProfile `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

// env returns a container's variable, and whether it is set.
func (c container) env(name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func (d deployment) container(name string) (container, bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return container{}, false
}

type service struct {
	Metadata meta `yaml:"metadata"`
	Spec     struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// quantity parses the CPU and memory quantities used in resources into
// milli-CPUs or bytes. Only the suffixes the manifests need are known.
func quantity(s string) (float64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"m", 0.001}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suffix), 64)
			return v * u.mult, err
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("quantity %q: %w", s, err)
	}
	return v, nil
}

// selects says whether a selector picks pods with these labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func yamlMarshal(v any) ([]byte, error) { return yaml.Marshal(v) }
