package agent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agenttest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
)

func TestMain(m *testing.M) {
	flog.SetLogLevelQuiet(flog.Critical)
	code := m.Run()
	agenttest.Cleanup()
	os.Exit(code)
}

// counting serves "ok" and counts requests.
func counting(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func body(target string, qps float64, conns int, d string) string {
	return `{"scenario":{"name":"t","service":"details","path":"/x","timeout":"2s","keepalive":true},` +
		`"profile":{"name":"p","qps":` + jsonNum(qps) + `,"connections":` + jsonNum(float64(conns)) + `,"duration":"` + d + `"},` +
		`"target":{"name":"a","url":"` + target + `"},"repetition":1}`
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func post(t *testing.T, ctx context.Context, u, b string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func get(t *testing.T, u string, out any) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("GET %s: %v: %s", u, err, data)
		}
	}
	return resp.StatusCode
}

// TestBadRequests: every malformed or out-of-limit request is refused
// before any load, with a 4xx that names the field.
func TestBadRequests(t *testing.T) {
	target, n := counting(t)
	a := agenttest.Start(t, "--max-connections", "50", "--max-qps", "1000")
	good := body(target.URL, 10, 1, "1s")
	cases := []struct {
		name, body, field, says string
		code                    int
	}{
		{"empty", ``, "", "empty body", 400},
		{"not JSON", `{"scenario":`, "", "not JSON", 400},
		{"trailing", good + `{}`, "", "after the JSON object", 400},
		{"unknown field", strings.Replace(good, `"repetition"`, `"repetitions"`, 1), "repetitions", "unknown field", 400},
		{"no scenario", strings.Replace(good, `"scenario"`, `"x-scenario"`, 1), "x-scenario", "unknown field", 400},
		{"qps zero", body(target.URL, 0, 1, "1s"), "profile.qps", "must be > 0", 400},
		{"qps over limit", body(target.URL, 5000, 1, "1s"), "profile.qps", "--max-qps", 400},
		{"qps a string", strings.Replace(good, `"qps":10`, `"qps":"10"`, 1), "profile.qps", "float64", 400},
		{"connections over limit", body(target.URL, 100, 51, "2s"), "profile.connections", "--max-connections", 400},
		{"connections zero", body(target.URL, 10, 0, "1s"), "profile.connections", ">= 1", 400},
		{"too few requests per connection", body(target.URL, 10, 8, "1s"), "profile", "fewer than 2 per connection", 400},
		{"duration unit", body(target.URL, 10, 1, "3x"), "profile.duration", "duration", 400},
		{"duration over limit", body(target.URL, 10, 1, "11m"), "profile.duration", "--max-duration", 400},
		{"timeout", strings.Replace(good, `"timeout":"2s"`, `"timeout":"0s"`, 1), "scenario.timeout", "must be > 0", 400},
		{"path", strings.Replace(good, `"path":"/x"`, `"path":"x"`, 1), "scenario.path", "must start with /", 400},
		{"header", strings.Replace(good, `"keepalive":true`, `"keepalive":true,"headers":[{"name":"Bad Name","value":"v"}]`, 1), "scenario.headers[0]", "not a valid header", 400},
		{"target scheme", body("ftp://127.0.0.1:1", 10, 1, "1s"), "target.url", "http or https", 400},
		{"target no host", body("http://", 10, 1, "1s"), "target.url", "host", 400},
		{"target name", strings.Replace(good, `"name":"a"`, `"name":"a/b"`, 1), "target.name", "letters", 400},
		{"repetition", strings.Replace(good, `"repetition":1`, `"repetition":-1`, 1), "repetition", ">= 0", 400},
		{"too big", `{"labels":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`, "", "body over", 413},
	}
	for _, path := range []string{agentwire.RunPath, agentwire.CheckPath} {
		for _, c := range cases {
			code, data := post(t, context.Background(), a.URL+path, c.body)
			var e agentwire.ErrorReply
			if err := json.Unmarshal(data, &e); err != nil {
				t.Errorf("%s %s: not an ErrorReply: %s", path, c.name, data)
				continue
			}
			if code != c.code || e.Field != c.field || !strings.Contains(e.Error, c.says) {
				t.Errorf("%s %s: %d field %q %q; want %d field %q saying %q", path, c.name, code, e.Field, e.Error, c.code, c.field, c.says)
			}
		}
	}
	if got := n.Load(); got != 0 {
		t.Errorf("the target got %d requests from refused requests; want none", got)
	}
	// Wrong method, unknown endpoint.
	if code := get(t, a.URL+agentwire.RunPath, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", agentwire.RunPath, code)
	}
	if code := get(t, a.URL+agentwire.PathPrefix+"nope", nil); code != http.StatusNotFound {
		t.Errorf("GET %snope: %d, want 404", agentwire.PathPrefix, code)
	}
	// The same good request is accepted by check: one GET to the target.
	code, data := post(t, context.Background(), a.URL+agentwire.CheckPath, good)
	var cr agentwire.CheckReply
	if err := json.Unmarshal(data, &cr); code != 200 || err != nil || cr.Status != 200 || cr.URL != target.URL+"/x" || n.Load() != 1 {
		t.Errorf("check of a good request: %d %s (target got %d requests)", code, data, n.Load())
	}
	// A target that does not answer: 502.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	code, data = post(t, context.Background(), a.URL+agentwire.CheckPath, body(dead.URL, 10, 1, "1s"))
	if code != http.StatusBadGateway || !strings.Contains(string(data), "does not answer") {
		t.Errorf("check of a dead target: %d %s, want 502", code, data)
	}
}

// waitBusy polls the agent's status until a run is going (listed in
// fortio's REST status too).
func waitBusy(t *testing.T, u string) agentwire.StatusReply {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var st agentwire.StatusReply
		get(t, u+agentwire.StatusPath, &st)
		if st.Busy && st.Run != nil && st.Run.FortioRunID != 0 {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the agent never reported the run as busy")
	return agentwire.StatusReply{}
}

// TestOneRunAtATime: while a run goes, a second run gets 409, as does a run
// through fortio's own REST API; the run shows in fortio's REST status; the
// first run finishes with its result.
func TestOneRunAtATime(t *testing.T) {
	target, _ := counting(t)
	a := agenttest.Start(t)
	type answer struct {
		code int
		data []byte
	}
	first := make(chan answer, 1)
	go func() {
		code, data := post(t, context.Background(), a.URL+agentwire.RunPath, body(target.URL, 50, 2, "1500ms"))
		first <- answer{code, data}
	}()
	st := waitBusy(t, a.URL)
	if st.Run == nil || st.Run.Scenario != "t" || st.Run.Target != "a" || st.Run.FortioRunID == 0 || st.FortioRuns != 1 {
		t.Errorf("status during the run: %+v", st)
	}
	code, data := post(t, context.Background(), a.URL+agentwire.RunPath, body(target.URL, 10, 1, "1s"))
	if code != http.StatusConflict || !strings.Contains(string(data), "another run is in progress") {
		t.Errorf("second run: %d %s, want 409", code, data)
	}
	var fst struct{ Statuses map[string]json.RawMessage }
	get(t, a.URL+"/fortio/rest/status", &fst)
	if len(fst.Statuses) != 1 {
		t.Errorf("fortio's REST status lists %d runs during a bookload run, want 1", len(fst.Statuses))
	}
	var fr struct {
		Error   bool   `json:"error"`
		Message string `json:"message"`
	}
	if code := get(t, a.URL+"/fortio/rest/run?url="+target.URL+"&t=1s", &fr); code != http.StatusConflict || !fr.Error || !strings.Contains(fr.Message, "busy") {
		t.Errorf("fortio REST run during a bookload run: %d %+v, want 409 in fortio's error shape", code, fr)
	}
	got := <-first
	var doc struct {
		DurationHistogram json.RawMessage
		Bookload          struct {
			Requests int64
			Engine   string
			Latency  struct {
				Plain, Corrected struct {
					HdrHistogram string `json:"hdr_histogram_us"`
				}
			}
		} `json:"bookload"`
	}
	if err := json.Unmarshal(got.data, &doc); got.code != 200 || err != nil {
		t.Fatalf("first run: %d %v %.200s", got.code, err, got.data)
	}
	if doc.Bookload.Requests < 60 || doc.Bookload.Engine != "fortio" || doc.Bookload.Latency.Corrected.HdrHistogram == "" || len(doc.DurationHistogram) == 0 {
		t.Errorf("first run's document: %d requests, engine %q, corrected histogram %d bytes, fortio histogram %d bytes",
			doc.Bookload.Requests, doc.Bookload.Engine, len(doc.Bookload.Latency.Corrected.HdrHistogram), len(doc.DurationHistogram))
	}
	var after agentwire.StatusReply
	get(t, a.URL+agentwire.StatusPath, &after)
	if after.Busy || after.FortioRuns != 0 {
		t.Errorf("status after the run: %+v", after)
	}
}

// TestClientGoneStopsRun: a client that disconnects stops its run long
// before the run's duration; the agent is free again.
func TestClientGoneStopsRun(t *testing.T) {
	target, n := counting(t)
	a := agenttest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(t, ctx, a.URL+agentwire.RunPath, body(target.URL, 50, 2, "30s"))
	}()
	waitBusy(t, a.URL)
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st agentwire.StatusReply
		get(t, a.URL+agentwire.StatusPath, &st)
		if !st.Busy && st.FortioRuns == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent still runs 10 s after its client went away: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := n.Load(); got > 50*10 {
		t.Errorf("the target got %d requests; a 30 s run stopped within 10 s gets fewer than 500", got)
	}
}

// TestFortioStopStopsRun: fortio's own /fortio/rest/stop stops a bookload
// run, which then answers 409 instead of a partial result.
func TestFortioStopStopsRun(t *testing.T) {
	target, _ := counting(t)
	a := agenttest.Start(t)
	type answer struct {
		code int
		data []byte
	}
	res := make(chan answer, 1)
	go func() {
		code, data := post(t, context.Background(), a.URL+agentwire.RunPath, body(target.URL, 50, 2, "30s"))
		res <- answer{code, data}
	}()
	waitBusy(t, a.URL)
	if code := get(t, a.URL+"/fortio/rest/stop?wait=on", nil); code != 200 {
		t.Fatalf("fortio rest/stop: %d", code)
	}
	select {
	case got := <-res:
		if got.code != http.StatusConflict || !strings.Contains(string(got.data), "stopped") {
			t.Errorf("stopped run: %d %s, want 409 saying it was stopped", got.code, got.data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end 10 s after fortio's rest/stop")
	}
}
