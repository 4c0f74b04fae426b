package results

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Tool is the software that produced a result.
type Tool struct {
	Bookload string `json:"bookload"`
	Fortio   string `json:"fortio"`
	Go       string `json:"go"`
}

// Machine is where the load generator ran.
type Machine struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Kernel     string `json:"kernel,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// CurrentTool reads versions from the binary's build information.
func CurrentTool() Tool {
	t := Tool{Bookload: "unknown", Fortio: "unknown", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return t
	}
	t.Bookload = bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		t.Bookload += " " + rev + dirty
	}
	for _, d := range bi.Deps {
		if d.Path == "fortio.org/fortio" {
			t.Fortio = d.Version
		}
	}
	return t
}

// CurrentMachine describes this machine.
func CurrentMachine() Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}
