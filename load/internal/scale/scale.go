// Package scale is the data-plane side of a many-namespace scale run: it
// finds the run's namespaces through an API server proxy, builds one
// fan-out target whose members are each namespace's load client reached
// through the API server's service proxy, and wraps it with the cluster's
// cost (package clustercost). The runner then runs it like any target:
// warmup, repetitions, Ctrl-C, the result store, compare and report.
//
// The namespace contract (made by the scale templates): namespaces
// <prefix>-<i> labelled bookinfo-bench/scale: "true" and
// bookinfo-bench/scale-mode: no-mesh | sidecar | ambient, each with the app
// Service ratings (port 9080) and its load client, Deployment and Service
// fortio (port 8080) running `bookload agent` (or stock fortio).
package scale

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/agentengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fanout"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortiorest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Labels of the contract.
const (
	ScaleLabel = "bookinfo-bench/scale"
	ModeLabel  = "bookinfo-bench/scale-mode"
)

// DefaultSelector selects every scale namespace.
const DefaultSelector = ScaleLabel + "=true"

// Client kinds: what the fortio Service runs.
const (
	ClientAgent  = "agent"  // `bookload agent`: per-request histograms
	ClientFortio = "fortio" // stock fortio: its bucket histograms
)

// Config is one scale target.
type Config struct {
	API      *kube.API
	Selector string
	// Name names the target (the mode); "" means the namespaces'
	// ModeLabel, when they all agree.
	Name string
	// ClientService is the load client's Service NAME:PORT (fortio:8080).
	ClientService string
	// ClientKind is ClientAgent or ClientFortio.
	ClientKind string
	// AppURL is the in-cluster base URL each client loads (http://ratings:9080).
	AppURL string
	// Cost samples the cluster's CPU and memory for each repetition.
	Cost         bool
	CostInterval time.Duration
	// Prometheus, if set, is the cost's source instead of the kubelet
	// summary API.
	Prometheus string
	// Settle is how long a client that cannot reach its app yet is given
	// before the run fails (fanout.Engine.Settle).
	Settle time.Duration
}

// Validate checks the fields a user gives, naming the flag at fault.
func (c *Config) Validate() error {
	if strings.TrimSpace(c.Selector) == "" {
		return fmt.Errorf("--selector: empty; e.g. --selector %s", DefaultSelector)
	}
	if c.Name != "" {
		if err := (loadtarget.Target{Name: c.Name, URL: "http://x"}).Validate(); err != nil {
			return fmt.Errorf("--name %q: use letters, digits, '.', '_' and '-'", c.Name)
		}
	}
	name, port, ok := strings.Cut(c.ClientService, ":")
	if n, err := strconv.Atoi(port); !ok || name == "" || err != nil || n < 1 || n > 65535 || strings.ContainsAny(name, "/?#") {
		return fmt.Errorf("--client-service %q: want NAME:PORT, e.g. fortio:8080", c.ClientService)
	}
	if c.ClientKind != ClientAgent && c.ClientKind != ClientFortio {
		return fmt.Errorf("--client %q: want %s (bookload agent) or %s (stock fortio)", c.ClientKind, ClientAgent, ClientFortio)
	}
	u, err := url.Parse(c.AppURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("--app-url %q: want the in-cluster base URL of the app, e.g. http://ratings:9080", c.AppURL)
	}
	if c.Prometheus != "" {
		if _, err := clustercost.ParsePrometheusURL(c.Prometheus); err != nil {
			return err
		}
		if !c.Cost {
			return fmt.Errorf("--prometheus %q with --cost=false: the Prometheus URL is the cost's source", c.Prometheus)
		}
	}
	if c.CostInterval < 0 {
		return fmt.Errorf("--cost-interval %v: must be >= 0", c.CostInterval)
	}
	if c.Settle < 0 {
		return fmt.Errorf("--settle %v: must be >= 0", c.Settle)
	}
	return nil
}

// Discover lists the namespaces matching the selector; none is an error
// that names the selector.
func Discover(ctx context.Context, api *kube.API, selector string) ([]kube.Object, error) {
	ns, err := api.Namespaces(ctx, selector)
	if err != nil {
		return nil, fmt.Errorf("listing namespaces with --selector %q: %w", selector, err)
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("no namespace matches --selector %q at %s (kubectl get namespaces -l '%s'); are the scale namespaces created?", selector, api.Base, selector)
	}
	return ns, nil
}

// Mode is the namespaces' common ModeLabel.
func Mode(ns []kube.Object) (string, error) {
	modes := map[string][]string{}
	for _, n := range ns {
		modes[n.Labels[ModeLabel]] = append(modes[n.Labels[ModeLabel]], n.Name)
	}
	if len(modes) == 1 {
		for m := range modes {
			if m != "" {
				return m, nil
			}
		}
		return "", fmt.Errorf("the namespaces have no %s label: give --name", ModeLabel)
	}
	var parts []string
	for m, names := range modes {
		if m == "" {
			m = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s: %s", m, names[0]))
	}
	return "", fmt.Errorf("the namespaces disagree on %s (%s, ...): narrow --selector (e.g. add ,%s=ambient) or give --name", ModeLabel, strings.Join(parts, "; "), ModeLabel)
}

// memberClient is shared by all members: every call goes to the one proxy,
// so it keeps as many idle connections as there are members (the default
// keeps 2 and would reopen hundreds at each repetition). No client timeout:
// a run's POST lasts the repetition; each call has its own deadline.
func memberClient(n int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil, // loopback to the proxy, never through an HTTP(S)_PROXY
		MaxIdleConns:        n + 16,
		MaxIdleConnsPerHost: n + 16,
		IdleConnTimeout:     5 * time.Minute,
		ForceAttemptHTTP2:   false,
	}}
}

// Build makes the fan-out target of namespaces: its engine (cost-wrapped
// when cfg.Cost) and the target that names it.
func Build(cfg Config, namespaces []kube.Object) (loadtarget.Target, engine.Engine, error) {
	name := cfg.Name
	if name == "" {
		m, err := Mode(namespaces)
		if err != nil {
			return loadtarget.Target{}, nil, err
		}
		name = m
	}
	if len(namespaces) > fanout.MaxMembers {
		return loadtarget.Target{}, nil, fmt.Errorf("--selector %q matches %d namespaces, more than the %d one run drives: narrow it", cfg.Selector, len(namespaces), fanout.MaxMembers)
	}
	client := memberClient(len(namespaces))
	members := make([]fanout.Member, 0, len(namespaces))
	names := make([]string, 0, len(namespaces))
	for _, ns := range namespaces {
		base := cfg.API.Base + kube.ServiceProxyPath(ns.Name, cfg.ClientService)
		t := loadtarget.Target{Name: name}
		var e engine.Engine
		switch cfg.ClientKind {
		case ClientAgent:
			t.URL = "bookload+" + base + "?url=" + cfg.AppURL
			ae, err := agentengine.New(t)
			if err != nil {
				return loadtarget.Target{}, nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
			}
			ae.Client = client
			e = ae
		case ClientFortio:
			t.URL = "fortio+" + base + "/fortio/?url=" + cfg.AppURL
			fe, err := fortiorest.New(t)
			if err != nil {
				return loadtarget.Target{}, nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
			}
			fe.Client = client
			e = fe
		}
		members = append(members, fanout.Member{Name: ns.Name, Target: t, Engine: e})
		names = append(names, ns.Name)
	}
	fo, err := fanout.New(members)
	if err != nil {
		return loadtarget.Target{}, nil, err
	}
	fo.Settle = cfg.Settle
	target := loadtarget.Target{Name: name, URL: cfg.API.Base, Knobs: map[string]string{
		"scale_selector":   cfg.Selector,
		"scale_namespaces": strconv.Itoa(len(namespaces)),
		"scale_first":      names[0],
		"scale_last":       names[len(names)-1],
		"scale_client":     cfg.ClientKind + " at " + kube.ServiceProxyPath("NS", cfg.ClientService),
		"scale_app_url":    cfg.AppURL,
	}}
	var eng engine.Engine = fo
	if cfg.Cost {
		var src clustercost.Source = &clustercost.Sampler{API: cfg.API, AppNamespaces: names, Interval: cfg.CostInterval}
		if cfg.Prometheus != "" {
			u, _ := clustercost.ParsePrometheusURL(cfg.Prometheus)
			src = &clustercost.Prometheus{URL: u, API: cfg.API, AppNamespaces: names, Step: cfg.CostInterval}
		}
		eng = &clustercost.Engine{Inner: fo, Source: src}
	}
	return target, eng, nil
}
