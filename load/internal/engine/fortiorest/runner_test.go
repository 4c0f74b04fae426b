package fortiorest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fortio.org/fortio/rapi"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortiorest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// TestRunnerStoresAndCompares: `bookload run` with two fortio+http targets
// (one in-process fortio server, two apps of different latency through
// ?url=) goes through the registry's choice by scheme, stores repetitions
// like local runs, and compare reads them, finds the slower one and says
// how precise the numbers are.
func TestRunnerStoresAndCompares(t *testing.T) {
	app := func(d time.Duration) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(d)
			_, _ = w.Write([]byte("ok"))
		}))
		t.Cleanup(s.Close)
		return s
	}
	fast, slow := app(2*time.Millisecond), app(12*time.Millisecond)
	mux := http.NewServeMux()
	rapi.AddHandlers(mux, "", "/fortio/", t.TempDir())
	fs := httptest.NewServer(mux)
	defer fs.Close()

	var ts []loadtarget.Target
	for _, arg := range []string{
		"no-mesh=fortio+" + fs.URL + "?url=" + fast.URL,
		"mesh=fortio+" + fs.URL + "/fortio?url=" + slow.URL,
	} {
		tg, err := loadtarget.Parse(arg)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tg)
	}
	s := &scenario.Scenario{
		Name: "remote", Service: "details", Path: "/details/0", KeepAlive: true,
		Timeout: scenario.Duration(2 * time.Second), Repetitions: 4, Warmup: scenario.Duration(200 * time.Millisecond),
		Profiles: []scenario.Profile{{Name: "p", QPS: 50, Connections: 2, Duration: scenario.Duration(400 * time.Millisecond)}},
	}
	out, err := runner.Run(context.Background(), runner.Config{Scenario: s, Targets: ts, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if out.Run.Status != results.StatusComplete || len(out.Run.Done) != 8 || out.Run.Engines["mesh"] != fortiorest.Name {
		t.Fatalf("run %s, %d done, engines %v", out.Run.Status, len(out.Run.Done), out.Run.Engines)
	}
	if _, err := os.Stat(filepath.Join(out.Dir, results.RepPath("mesh", "p", 4))); err != nil {
		t.Fatal(err)
	}
	loaded, err := results.Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	table, err := compare.Build([]*results.Loaded{loaded}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || table.Rows[0].Target != "no-mesh" {
		t.Fatalf("rows %+v", table.Rows)
	}
	d := table.Rows[1].VsBaseline["p50"]
	if !d.Significant || d.DeltaMS < 7 || d.DeltaMS > 13 {
		t.Errorf("mesh vs no-mesh p50: %+v, want about +10 ms and significant", d)
	}
	var b bytes.Buffer
	if err := table.Write(&b, "md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no-mesh, mesh ran on a remote fortio") {
		t.Errorf("no precision note in:\n%s", b.String())
	}
	t.Log("\n" + b.String())
}
