package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func init() {
	commands["scale"] = command{summary: "load every namespace of a scale run at once through the API server, merge, and measure the cluster's cost", run: scaleCmd}
}

// clusterFlags reach the API server: --api URL of a running proxy, or a
// kubectl proxy started with --kubeconfig and --context.
type clusterFlags struct {
	api, kubeconfig, context *string
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		api:        fs.String("api", "", "`URL` of a running API server proxy (kubectl proxy); default: bookload starts one on 127.0.0.1 with a free port and stops it at the end"),
		kubeconfig: fs.String("kubeconfig", "", "kubeconfig `FILE` for the kubectl proxy bookload starts (default: kubectl's)"),
		context:    fs.String("context", "", "kubeconfig `CONTEXT` for the kubectl proxy bookload starts (default: the current one)"),
	}
}

// connect returns the API and a func that stops what connect started.
func (c clusterFlags) connect(ctx context.Context) (*kube.API, func(), error) {
	if *c.api != "" {
		if *c.kubeconfig != "" || *c.context != "" {
			return nil, nil, errors.New("--api and --kubeconfig/--context: give one (the proxy at --api has its own credentials)")
		}
		base, err := kube.ParseBase(*c.api)
		if err != nil {
			return nil, nil, err
		}
		return &kube.API{Base: base}, func() {}, nil
	}
	p, err := kube.StartProxy(ctx, *c.kubeconfig, *c.context)
	if err != nil {
		return nil, nil, err
	}
	return &kube.API{Base: p.URL}, p.Stop, nil
}

func scaleCmd(args []string) int {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	labels := labelFlags{}
	cl := addClusterFlags(fs)
	selector := fs.String("selector", scale.DefaultSelector, "label `SELECTOR` of the run's namespaces")
	name := fs.String("name", "", "target `NAME` (the mode) in the results (default: the namespaces' "+scale.ModeLabel+" label when they all agree)")
	clientSvc := fs.String("client-service", "fortio:8080", "each namespace's load client Service `NAME:PORT`")
	clientKind := fs.String("client", scale.ClientAgent, "what the load client runs: agent (bookload agent, per-request histograms) or fortio (stock fortio, its buckets)")
	appURL := fs.String("app-url", "http://ratings:9080", "`URL` each load client loads (in its namespace), the scenario's path appended")
	cost := fs.Bool("cost", true, "sample the kubelet summary API for each repetition: CPU and peak memory per group, queries per core")
	costInterval := fs.Duration("cost-interval", 0, "time between cost samples inside a window (default 5s)")
	settle := fs.Duration("settle", time.Minute, "how long a load client that cannot reach its app yet (a namespace made a moment ago) is retried before the run fails")
	prometheus := fs.String("prometheus", "", "`URL` of a Prometheus scraping the kubelets' cAdvisor metrics: the cost's source instead of the kubelet summary API")
	out := fs.String("out", "results", "`DIR` under which the run directory is made")
	reps := fs.Int("repetitions", 0, "repetitions (consecutive windows; default: the scenario's)")
	fs.Var(labels, "label", "`k=v` recorded with the run and every repetition, repeatable")
	dir := fs.String("scenarios", "scenarios", "`DIR` holding SCENARIO.yaml when SCENARIO is a name")
	format := fs.String("format", "md", "format of the comparison table: md, csv, json or bench")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload scale SCENARIO [--selector SELECTOR] [--name MODE] [--api URL | --kubeconfig F --context C]")
		fmt.Fprintln(fs.Output(), "                      [--client-service fortio:8080] [--app-url http://ratings:9080] [--prometheus URL] [--out DIR] [--repetitions N] [--label k=v]...")
		fmt.Fprintln(fs.Output(), "\nDrives every matching namespace's load client at once, each at the scenario's rate, through the API server's")
		fmt.Fprintln(fs.Output(), "service proxy, and stores one merged repetition per window. Ctrl-C keeps the finished repetitions (partial run).")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	pos, code := parseScenarioArgs(fs, args)
	if code >= 0 {
		return code
	}
	if *reps < 0 {
		fmt.Fprintf(os.Stderr, "bookload scale: --repetitions %d: must be >= 1\n", *reps)
		return 2
	}
	cfg := scale.Config{Selector: *selector, Name: *name, ClientService: *clientSvc, ClientKind: *clientKind, AppURL: *appURL, Cost: *cost, CostInterval: *costInterval, Prometheus: *prometheus, Settle: *settle}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "bookload scale:", err)
		return 2
	}
	if *cl.api != "" {
		if _, err := kube.ParseBase(*cl.api); err != nil {
			fmt.Fprintln(os.Stderr, "bookload scale:", err)
			return 2
		}
	}
	s, err := scenario.Resolve(pos[0], *dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload scale:", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	api, closeAPI, err := cl.connect(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload scale:", err)
		return 1
	}
	defer closeAPI()
	cfg.API = api
	return runScale(ctx, os.Stdout, os.Stderr, cfg, s, *reps, *out, labels, *format)
}

// runScale discovers, builds and runs; the exit status of `bookload scale`.
func runScale(ctx context.Context, stdout, stderr io.Writer, cfg scale.Config, s *scenario.Scenario, reps int, out string, labels map[string]string, format string) int {
	nss, err := scale.Discover(ctx, cfg.API, cfg.Selector)
	if err != nil {
		fmt.Fprintln(stderr, "bookload scale:", err)
		return 1
	}
	target, eng, err := scale.Build(cfg, nss)
	if err != nil {
		fmt.Fprintln(stderr, "bookload scale:", err)
		return 1
	}
	fmt.Fprintf(stderr, "bookload scale: %d namespaces (%s .. %s) as target %s, %g qps x %d connections each\n",
		len(nss), nss[0].Name, nss[len(nss)-1].Name, target.Name, s.Profiles[0].QPS, s.Profiles[0].Connections)
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && runner.IsTerminal(f) {
		progress = f
	}
	res, err := runner.Run(ctx, runner.Config{
		Scenario: s, Targets: []loadtarget.Target{target}, Repetitions: reps, Out: out, Labels: labels, Progress: progress,
		EngineFor: func(loadtarget.Target) (engine.Engine, error) { return eng, nil },
	})
	if res == nil {
		fmt.Fprintln(stderr, "bookload scale:", err)
		return 1
	}
	fmt.Fprintf(stdout, "results: %s (%s, %d of %d repetitions)\n\n", res.Dir, res.Run.Status, len(res.Run.Done), len(res.Run.Plan))
	if len(res.Run.Done) > 0 {
		if cerr := printComparison(stdout, []string{res.Dir}, compare.Options{}, format); cerr != nil {
			fmt.Fprintln(stderr, "bookload scale:", cerr)
		}
		if l, oerr := results.Open(res.Dir); oerr == nil {
			fmt.Fprintln(stdout)
			_ = scale.WriteSummary(stdout, []*results.Loaded{l})
		}
	}
	switch {
	case errors.Is(err, runner.ErrInterrupted):
		fmt.Fprintf(stderr, "bookload scale: interrupted; kept %d finished repetitions in %s, marked partial\n", len(res.Run.Done), res.Dir)
		return 130
	case err != nil:
		fmt.Fprintln(stderr, "bookload scale:", err)
		return 1
	}
	return 0
}
