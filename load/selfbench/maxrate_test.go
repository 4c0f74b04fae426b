package selfbench

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"
	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

const connections = 4

var (
	rounds = flag.Int("rounds", 7, "rounds of BenchmarkMaxRateInterleaved")
	runFor = flag.Duration("run-for", time.Second, "length of one max-rate run")
)

// fortio logs a few lines per run at info level; the engine quiets it, the
// bare run must be quiet too for a fair comparison.
func init() { flog.SetLogLevelQuiet(flog.Critical) }

func echoServer(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(fhttp.EchoHandler))
	b.Cleanup(srv.Close)
	return srv.URL
}

// request is a max-speed (qps -1) run of runFor over connections.
func request(url string) engine.Request {
	return engine.Request{
		Scenario: &scenario.Scenario{Name: "bench", Service: "details", Path: "/echo", KeepAlive: true,
			Timeout: scenario.Duration(3 * time.Second), Repetitions: 1},
		Profile:    scenario.Profile{Name: "max", QPS: -1, Connections: connections, Duration: scenario.Duration(*runFor)},
		Target:     loadtarget.Target{Name: "echo", URL: url},
		Repetition: 1,
	}
}

type variant struct {
	name string
	run  func(b *testing.B, url string) float64 // achieved requests per second
}

var variants = []variant{
	{"bare-fortio", func(b *testing.B, url string) float64 {
		o, err := fortioengine.Options(request(url))
		if err != nil {
			b.Fatal(err)
		}
		res, err := fhttp.RunHTTPTest(o)
		if err != nil {
			b.Fatal(err)
		}
		return res.ActualQPS
	}},
	{"bookload-no-recording", func(b *testing.B, url string) float64 {
		return engineRate(b, &fortioengine.Engine{NoRecorder: true}, url)
	}},
	{"bookload", func(b *testing.B, url string) float64 {
		return engineRate(b, &fortioengine.Engine{}, url)
	}},
}

func engineRate(b *testing.B, e *fortioengine.Engine, url string) float64 {
	res, err := e.Run(context.Background(), request(url), nil)
	if err != nil {
		b.Fatal(err)
	}
	if res.Errors > 0 {
		b.Fatalf("%d errors against the echo server", res.Errors)
	}
	return res.ActualQPS
}

// BenchmarkMaxRate: one sub-benchmark per variant; each op is a 1 s run at
// max speed, reported as req/s (for benchstat across commits).
func BenchmarkMaxRate(b *testing.B) {
	url := echoServer(b)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var sum float64
			for range b.N {
				sum += v.run(b, url)
			}
			b.ReportMetric(sum/float64(b.N), "req/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkMaxRateInterleaved reports the ratios the issue bounds. Each
// round runs the three variants back to back, in rotated order; the ratios
// are taken within a round (paired, so slow drift of a shared machine cancels)
// and the medians over rounds are reported.
func BenchmarkMaxRateInterleaved(b *testing.B) {
	url := echoServer(b)
	for range b.N {
		rates := make([][]float64, len(variants))
		var vsBare, vsNoRec []float64
		for r := range *rounds {
			round := make([]float64, len(variants))
			for i := range variants {
				v := (i + r) % len(variants)
				round[v] = variants[v].run(b, url)
				rates[v] = append(rates[v], round[v])
			}
			vsBare = append(vsBare, round[2]/round[0])
			vsNoRec = append(vsNoRec, round[2]/round[1])
		}
		b.ReportMetric(median(rates[0]), "bare-req/s")
		b.ReportMetric(median(rates[1]), "norecord-req/s")
		b.ReportMetric(median(rates[2]), "bookload-req/s")
		b.ReportMetric(median(vsBare), "bookload/bare")
		b.ReportMetric(median(vsNoRec), "record/norecord")
		b.ReportMetric(0, "ns/op")
		b.Logf("req/s per round: bare %.0f", rates[0])
		b.Logf("req/s per round: bookload without recording %.0f", rates[1])
		b.Logf("req/s per round: bookload %.0f", rates[2])
		b.Logf("bookload/bare per round %.3f; recording/no recording per round %.3f", vsBare, vsNoRec)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
