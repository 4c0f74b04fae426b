package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/registry"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/throughput"
)

func init() {
	commands["run"] = command{summary: "run a scenario against targets (interleaved, repeated) and save the results", run: runCmd}
}

// targetFlags collects repeated --target NAME=BASEURL.
type targetFlags []loadtarget.Target

func (f *targetFlags) String() string { return "" }

func (f *targetFlags) Set(v string) error {
	t, err := loadtarget.Parse(v)
	if err != nil {
		return err
	}
	*f = append(*f, t)
	return nil
}

// labelFlags collects repeated --label k=v.
type labelFlags map[string]string

func (f labelFlags) String() string { return "" }

func (f labelFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want key=value", v)
	}
	f[k] = val
	return nil
}

// parseInterspersed parses flags given before, between and after positional
// arguments (the flag package alone stops at the first positional one).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseScenarioArgs parses the flags of a command taking one SCENARIO
// argument, anywhere among them. code is the exit status to return at once
// (0 after --help, 2 for bad flags or not one argument, with the usage), or
// -1 to go on with pos[0].
func parseScenarioArgs(fs *flag.FlagSet, args []string) (pos []string, code int) {
	pos, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, 0
	case err != nil:
		return nil, 2
	case len(pos) != 1:
		fs.Usage()
		return nil, 2
	}
	return pos, -1
}

func runCmd(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var targets targetFlags
	labels := labelFlags{}
	fs.Var(&targets, "target", "`NAME=BASEURL` to load, repeatable; targets are interleaved (default: local=http://127.0.0.1:<port of the scenario's service>)")
	out := fs.String("out", "results", "`DIR` under which the run directory is made")
	reps := fs.Int("repetitions", 0, "repetitions per profile and target (default: the scenario's)")
	fs.Var(labels, "label", "`k=v` recorded with the run and every repetition, repeatable")
	dir := fs.String("scenarios", "scenarios", "`DIR` holding SCENARIO.yaml when SCENARIO is a name")
	baseline := fs.String("baseline", "", "target the summary compares against (default: the first)")
	format := fs.String("format", "md", "summary format: "+strings.Join(compare.Formats, ", "))
	var margins compare.Margins
	fs.Var(&margins, "margin", marginUsage)
	decided := fs.Bool("until-decided", false, "repeat rounds of every target until each --margin verdict is decided (an anytime-valid confidence sequence, valid however often it looks), or --budget is spent; --repetitions is then the most rounds per profile (default 200)")
	decide := fs.String("decide", "", "with --until-decided, comma-separated `METRICS` whose verdicts it waits for (default: every metric with a --margin)")
	parts := partPrecision{}
	fs.Var(parts, "part-precision", "with --until-decided, `PART=DURATION`, repeatable: also wait until the p50 difference of a waterfall part (hop:client, hop:details, server:reviews, ...) has an interval no wider than ± DURATION")
	var precision compare.Margins
	fs.Var(&precision, "precision", "with --until-decided, `METRIC=DURATION`, repeatable: also wait until every difference of METRIC has an interval no wider than ± DURATION")
	budget := fs.Duration("budget", 10*time.Minute, "with --until-decided: the longest the run may take, shared evenly by its profiles")
	clusterCost := fs.Bool("cluster-cost", false, "sample the cluster's kubelet summary API for each repetition (CPU and peak memory per group, queries per core); needs --cost-namespaces, and --api or a kubectl proxy (--kubeconfig, --context)")
	costNamespaces := fs.String("cost-namespaces", "", "with --cluster-cost: comma-separated `NAMESPACES` whose pods are the apps")
	costInterval := fs.Duration("cost-interval", 0, "with --cluster-cost: time between samples inside a window (default 5s)")
	prometheus := fs.String("prometheus", "", "with --cluster-cost: `URL` of a Prometheus scraping the kubelets' cAdvisor metrics, the cost's source instead of the kubelet summary API")
	cl := addClusterFlags(fs)
	mesh := addMeshFlags(fs)
	engineName := fs.String("engine", registry.Auto, registry.FlagHelp())
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: bookload run SCENARIO [--target NAME=BASEURL]... [--engine %s] [--out DIR] [--repetitions N] [--label k=v]...\n", strings.Join(registry.Names(), "|"))
		fmt.Fprintln(fs.Output(), "                    [--baseline NAME] [--margin p99=1ms]... [--until-decided [--budget 10m] [--decide p50] [--precision p50=0.1ms] [--part-precision hop:client=0.1ms]] [--format md|csv|json|bench|waterfall-csv]")
		fmt.Fprintln(fs.Output(), "                    [--cluster-cost --cost-namespaces NS[,NS] [--prometheus URL]] [--mesh NAME=NAMESPACE[:MODE]]...")
		fmt.Fprintln(fs.Output(), "                    [--api URL | --kubeconfig F --context C] (with --cluster-cost or --mesh)")
		fmt.Fprintln(fs.Output(), "\nSCENARIO is a name in scenarios/ (e.g. smoke) or a path to a YAML file. Ctrl-C stops the current")
		fmt.Fprintln(fs.Output(), "repetition, keeps the finished ones, marks the run partial and exits 130.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	pos, code := parseScenarioArgs(fs, args)
	if code >= 0 {
		return code
	}
	s, err := scenario.Resolve(pos[0], *dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload run:", err)
		return 1
	}
	engineFor, err := registry.Named(*engineName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload run:", err)
		return 2
	}
	proving, err := mesh.set()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload run:", err)
		return 2
	}
	var appNamespaces []string
	for _, ns := range strings.Split(*costNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			appNamespaces = append(appNamespaces, ns)
		}
	}
	switch {
	case *clusterCost && len(appNamespaces) == 0:
		fmt.Fprintln(os.Stderr, "bookload run: --cluster-cost needs --cost-namespaces NS[,NS...] (the namespaces whose pods are the apps)")
		return 2
	case !*clusterCost && (len(appNamespaces) > 0 || *costInterval != 0 || *prometheus != ""):
		fmt.Fprintln(os.Stderr, "bookload run: --cost-namespaces, --cost-interval and --prometheus go with --cluster-cost")
		return 2
	case !*clusterCost && !proving && (*cl.api != "" || *cl.kubeconfig != "" || *cl.context != ""):
		fmt.Fprintln(os.Stderr, "bookload run: --api, --kubeconfig and --context go with --cluster-cost or --mesh")
		return 2
	case *costInterval < 0:
		fmt.Fprintf(os.Stderr, "bookload run: --cost-interval %v: must be >= 0\n", *costInterval)
		return 2
	}
	if *cl.api != "" {
		if _, err := kube.ParseBase(*cl.api); err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 2
		}
	}
	if *prometheus != "" {
		if _, err := clustercost.ParsePrometheusURL(*prometheus); err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 2
		}
	}
	if len(targets) == 0 && s.Service == scenario.Echo {
		// fortio's echo server in this process, as the bench's loopback
		// floor runs it: its CPU is then part of process_cpu_seconds.
		log.SetLogLevelQuiet(log.Critical)
		_, addr := fhttp.ServeTCP("127.0.0.1:0", "")
		if addr == nil {
			fmt.Fprintln(os.Stderr, "bookload run: cannot start fortio's echo server on loopback")
			return 1
		}
		targets = append(targets, loadtarget.Target{Name: "echo", URL: "http://" + addr.String()})
	}
	if len(targets) == 0 {
		t, err := loadtarget.Local(s.Service)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 1
		}
		targets = append(targets, t)
	}

	var until runner.Until
	var sequential *results.Sequential
	if !*decided && (flagGiven(fs, "budget") || len(precision) > 0 || len(parts) > 0 || *decide != "") {
		fmt.Fprintln(os.Stderr, "bookload run: --budget, --precision, --part-precision and --decide go with --until-decided")
		return 2
	}
	if *decided {
		if until, sequential, err = untilDecided(*baseline, margins, precision, parts, *decide, targets, *budget); err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first Ctrl-C, a second one kills at once.
	context.AfterFunc(ctx, stop)
	var api *kube.API
	if *clusterCost || proving {
		a, closeAPI, err := cl.connect(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 1
		}
		defer closeAPI()
		api = a
	}
	if *clusterCost {
		var src clustercost.Source = &clustercost.Sampler{API: api, AppNamespaces: appNamespaces, Interval: *costInterval}
		if *prometheus != "" {
			u, _ := clustercost.ParsePrometheusURL(*prometheus)
			src = &clustercost.Prometheus{URL: u, API: api, AppNamespaces: appNamespaces, Step: *costInterval}
		}
		engineFor = clustercost.Wrap(engineFor, src)
	}
	engineFor = throughput.Wrap(engineFor, fortioengine.Name)
	if proving {
		// Outside the cost's window: the proof's reads are not the load's cost.
		if engineFor, err = mesh.wrap(engineFor, api, targets); err != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", err)
			return 2
		}
	}
	var progress io.Writer
	if runner.IsTerminal(os.Stderr) {
		progress = os.Stderr
	}
	res, err := runner.Run(ctx, runner.Config{
		Scenario: s, Targets: targets, Repetitions: *reps, Out: *out, Labels: labels, Progress: progress,
		EngineFor: engineFor, Until: until, Budget: *budget, Sequential: sequential,
	})
	if res == nil {
		fmt.Fprintln(os.Stderr, "bookload run:", err)
		return 1
	}
	fmt.Printf("results: %s (%s, %d of %d repetitions)\n\n", res.Dir, res.Run.Status, len(res.Run.Done), len(res.Run.Plan))
	if len(res.Run.Done) > 0 {
		if cerr := printComparison(os.Stdout, []string{res.Dir}, compare.Options{Baseline: *baseline, Margins: margins}, *format); cerr != nil {
			fmt.Fprintln(os.Stderr, "bookload run:", cerr)
		}
		if l, oerr := results.Open(res.Dir); *clusterCost && oerr == nil && *format == "md" {
			fmt.Println()
			clustercost.WriteTable(os.Stdout, l.Reps) // per repetition; the medians are in the comparison above
		}
	}
	switch {
	case errors.Is(err, runner.ErrInterrupted):
		fmt.Fprintf(os.Stderr, "bookload run: interrupted; kept %d finished repetitions in %s, marked partial\n", len(res.Run.Done), res.Dir)
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "bookload run:", err)
		return 1
	}
	return 0
}
