package selfbench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale/scaletest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

var (
	scaleMembers  = flag.Int("scale-members", 500, "namespaces (agents) of BenchmarkScaleFanout")
	scaleQPS      = flag.Float64("scale-qps", 2, "per-member rate of BenchmarkScaleFanout")
	scaleConns    = flag.Int("scale-connections", 1, "per-member connections of BenchmarkScaleFanout")
	scaleDuration = flag.Duration("scale-duration", 3*time.Second, "one repetition of BenchmarkScaleFanout")
)

// clusterEnv makes the test binary serve a fake scale cluster instead of
// running tests: BenchmarkScaleFanout runs it as a child process, so that
// what it measures in its own process is bookload's side alone (discovery,
// the fan-out, the merge, the cost sampling, the store), not the agents'
// load or the app's.
const clusterEnv = "BOOKLOAD_SELFBENCH_CLUSTER"

func TestMain(m *testing.M) {
	if n := os.Getenv(clusterEnv); n != "" {
		os.Exit(serveCluster(n))
	}
	os.Exit(m.Run())
}

// serveCluster serves N namespaces' agents behind a fake API server proxy
// and fortio's echo handler as their app, prints "API APP", and stops
// when stdin closes.
func serveCluster(n string) int {
	k, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, clusterEnv, err)
		return 2
	}
	app := httptest.NewServer(http.HandlerFunc(fhttp.EchoHandler))
	defer app.Close()
	cl := scaletest.New(scaletest.Options{Namespaces: k, Mesh: true})
	defer cl.Close()
	fmt.Println(cl.API.URL, app.URL)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// procStat is a process's CPU seconds and open file descriptors.
func procStat(pid int) (cpu float64, fds int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// fields after the command's ")": state is field 3; utime 14, stime 15
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		cpu = (ut + st) / 100 // USER_HZ
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		fds = len(ents)
	}
	return cpu, fds
}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func maxRSS() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // kB -> MiB
}

// BenchmarkScaleFanout: bookload driving and merging -scale-members agents
// (default 500) on loopback, each at -scale-qps over -scale-connections,
// one repetition per iteration through the runner with the cluster cost
// sampled, as `bookload scale` does. The agents and their app run in a
// child process; the metrics are bookload's own: CPU-seconds per merged
// repetition, peak heap in use, peak RSS, peak open file descriptors (and
// per member), and the child's CPU for scale.
//
//	go test ./load/selfbench -run '^$' -bench ScaleFanout -benchtime 3x
func BenchmarkScaleFanout(b *testing.B) {
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%d", clusterEnv, *scaleMembers))
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = child.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	urls := strings.Fields(line)
	if err != nil || len(urls) != 2 {
		b.Fatalf("fake cluster: %q %v", line, err)
	}
	s := &scenario.Scenario{Name: "selfbench-scale", Service: "ratings", Path: "/echo", KeepAlive: true, Uniform: true, Repetitions: 1,
		Timeout:  scenario.Duration(3 * time.Second),
		Profiles: []scenario.Profile{{Name: "p", QPS: *scaleQPS, Connections: *scaleConns, Duration: scenario.Duration(*scaleDuration)}}}
	api := &kube.API{Base: urls[0]}
	cfg := scale.Config{API: api, Selector: scale.DefaultSelector, ClientService: "fortio:8080", ClientKind: scale.ClientAgent,
		AppURL: urls[1], Cost: true, CostInterval: time.Second}
	ctx := context.Background()
	nss, err := scale.Discover(ctx, api, cfg.Selector)
	if err != nil {
		b.Fatal(err)
	}
	target, eng, err := scale.Build(cfg, nss)
	if err != nil {
		b.Fatal(err)
	}

	// Peaks, sampled every 50 ms while the benchmark runs.
	var mu sync.Mutex
	var peakHeap uint64
	var peakFDs int
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			_, fds := procStat(os.Getpid())
			mu.Lock()
			peakHeap, peakFDs = max(peakHeap, ms.HeapInuse), max(peakFDs, fds)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	_, fds0 := procStat(os.Getpid())
	childCPU0, _ := procStat(child.Process.Pid)
	cpu0 := selfCPU()
	var requests int64
	b.ResetTimer()
	for range b.N {
		out, err := runner.Run(ctx, runner.Config{Scenario: s, Targets: []loadtarget.Target{target}, Out: b.TempDir(),
			EngineFor: func(loadtarget.Target) (engine.Engine, error) { return eng, nil }})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Run.Done) != 1 {
			b.Fatalf("run %+v", out.Run)
		}
		requests += int64(*scaleMembers) * int64(*scaleQPS*scaleDuration.Seconds())
	}
	b.StopTimer()
	cpu := selfCPU() - cpu0
	childCPU, childFDs := procStat(child.Process.Pid)
	close(stop)
	<-sampled
	n := float64(b.N)
	b.ReportMetric(cpu/n, "cpu-s/rep")
	b.ReportMetric(cpu/n/float64(*scaleMembers)*1000, "cpu-ms/member/rep")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(maxRSS(), "peak-rss-MiB")
	b.ReportMetric(float64(peakFDs), "peak-fds")
	b.ReportMetric(float64(peakFDs-fds0)/float64(*scaleMembers), "fds/member")
	b.ReportMetric((childCPU-childCPU0)/n, "agents-cpu-s/rep")
	b.Logf("%d members at %g qps x %d connections, %v per repetition, ~%d requests per repetition; agents' process holds %d fds",
		*scaleMembers, *scaleQPS, *scaleConns, *scaleDuration, requests/int64(b.N), childFDs)
}
