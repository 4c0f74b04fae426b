// Package k6engine drives load with the real k6 binary, one `k6 run` per
// repetition (and per warmup), on the script load/k6/01.constant-arrival-rate.js:
// the constant-arrival-rate executor at the profile's rate with
// preAllocatedVUs = maxVUs = connections (an open model with at most that
// many connections), noConnectionReuse when keep-alive is off. The profile
// goes to the script in BOOKLOAD_* environment variables (never K6_*, which
// would make k6 drop the script's scenarios; K6_* variables of the caller's
// environment are not passed on either).
//
// k6 writes every sample to a JSON file (`--out json=FILE`); bookload reads
// each request's http_req_duration and http_req_blocked from it into the same
// HdrHistograms, counts and result format as the fortio engine, so compare and
// report treat k6 and fortio repetitions alike.
//
// Plain latency is http_req_blocked + http_req_duration: from asking for a
// connection to the last byte of the answer, which is what fortio measures.
// With keep-alive, blocked is a few µs; without it, it holds the TCP connect,
// which http_req_duration alone leaves out. Corrected latency adds each
// request's scheduling delay, reconstructed from the executor's tick grid
// (see Output.Summarize); dropped iterations (every VU busy at a tick) are
// counted in engine_metadata.dropped_iterations and lower the achieved rate.
package k6engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
	k6scripts "github.com/bookinfo-bench/bookinfo-bench/load/k6"
)

// Name is the engine's name in run.json.
const Name = "k6"

// Version is the k6 that `make setup` builds (scripts/k6-tools.sh).
const Version = "v1.8.1"

// CorrectedNote is engine_metadata["corrected_latency"].
const CorrectedNote = "plain + scheduling delay: k6 does not expose when each iteration was due; the delay is reconstructed " +
	"from the constant-arrival-rate tick grid (request start times and dropped-iteration times in order, tick i due at " +
	"start + i/rate). A slow server makes k6 drop iterations (dropped_iterations) rather than send them late."

// Engine runs k6. The zero value finds k6 itself (see Find).
type Engine struct {
	// Binary is the k6 to run; "" means Find().
	Binary string
	// Stderr, if set, receives k6's own output (stdout and stderr).
	Stderr io.Writer
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// ToolsDir is where scripts/k6-tools.sh puts k6:
// ${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}/bin.
func ToolsDir() string {
	if d := os.Getenv("BOOKINFO_TOOLS_DIR"); d != "" {
		return filepath.Join(d, "bin")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "bookinfo-bench", "tools", "bin")
}

// ErrNotFound says k6 is missing and how to get it.
var ErrNotFound = errors.New("k6 not found")

// Find locates k6: $BOOKLOAD_K6, then the tools directory, then PATH.
func Find() (string, error) {
	if p := os.Getenv("BOOKLOAD_K6"); p != "" {
		if isExec(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: BOOKLOAD_K6=%s is not an executable file", ErrNotFound, p)
	}
	var looked []string
	if d := ToolsDir(); d != "" {
		p := filepath.Join(d, "k6")
		if isExec(p) {
			return p, nil
		}
		looked = append(looked, p)
	}
	if p, err := exec.LookPath("k6"); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", fmt.Errorf("%w (looked in %s): build it with `make setup` or `bash scripts/k6-tools.sh` "+
		"(go install go.k6.io/k6@%s into the tools directory, about 4 minutes), put k6 on PATH, or set BOOKLOAD_K6=/path/to/k6",
		ErrNotFound, strings.Join(looked, ", "), Version)
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func (e *Engine) binary() (string, error) {
	if e.Binary != "" {
		return e.Binary, nil
	}
	return Find()
}

// MinDuration is the shortest run of k6's constant-arrival-rate executor.
const MinDuration = time.Second

// Check implements engine.Engine: k6 must be there, every profile must last
// at least MinDuration, and the target must answer one GET (any HTTP answer
// will do).
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	if _, err := e.binary(); err != nil {
		return err
	}
	for _, p := range req.Scenario.Profiles {
		if p.Duration.Std() < MinDuration {
			return fmt.Errorf("scenario %s, profile %s: duration %s is shorter than the %s k6's constant-arrival-rate executor needs",
				req.Scenario.Name, p.Name, p.Duration, MinDuration)
		}
	}
	return engine.CheckHTTP(ctx, req)
}

// Env is the script's environment for req: the BOOKLOAD_* variables.
func Env(req engine.Request) ([]string, error) {
	s, p := req.Scenario, req.Profile
	headers := map[string]string{}
	for _, h := range s.Headers {
		headers[h.Name] = h.Value
	}
	hj, err := json.Marshal(headers)
	if err != nil {
		return nil, err
	}
	return []string{
		"BOOKLOAD_URL=" + req.Target.RequestURL(s.Path),
		"BOOKLOAD_RATE=" + strconv.FormatFloat(p.QPS, 'g', -1, 64),
		"BOOKLOAD_CONNECTIONS=" + strconv.Itoa(p.Connections),
		"BOOKLOAD_DURATION=" + k6Duration(p.Duration.Std()),
		"BOOKLOAD_TIMEOUT=" + k6Duration(s.Timeout.Std()),
		"BOOKLOAD_KEEPALIVE=" + strconv.FormatBool(s.KeepAlive),
		"BOOKLOAD_HEADERS=" + string(hj),
	}, nil
}

// k6Duration writes d in milliseconds, which k6 parses exactly ("1500ms").
func k6Duration(d time.Duration) string {
	return strconv.FormatInt(max(d.Milliseconds(), 1), 10) + "ms"
}

// Period is the interval between the executor's ticks for qps, as the script
// sets it up (an integer rate per 1 s, else round(qps·1000) per 1000 s).
func Period(qps float64) time.Duration {
	if qps <= 0 {
		return 0
	}
	if qps == math.Trunc(qps) {
		return time.Duration(float64(time.Second) / qps)
	}
	return time.Duration(1000 * float64(time.Second) / math.Round(qps*1000))
}

// childEnv is the caller's environment without any K6_* variable (K6_VUS,
// K6_DURATION, ... would replace the script's scenarios) and the script's
// variables.
func childEnv(extra []string) (env, dropped []string) {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "K6_") || strings.HasPrefix(kv, "BOOKLOAD_") {
			if strings.HasPrefix(kv, "K6_") {
				dropped = append(dropped, kv[:strings.IndexByte(kv, '=')])
			}
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...), dropped
}

// writeScripts copies the embedded scripts (lib/ included) into dir.
func writeScripts(dir string) error {
	return fs.WalkDir(k6scripts.Scripts, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := k6scripts.Scripts.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// tailBuffer keeps the last bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// Run implements engine.Engine: one `k6 run`.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	bin, err := e.binary()
	if err != nil {
		return nil, err
	}
	if req.Repetition == 0 && req.Profile.Duration.Std() < MinDuration {
		// A warmup (not recorded) shorter than k6 can run: run the minimum.
		req.Profile.Duration = scenario.Duration(MinDuration)
	}
	scriptEnv, err := Env(req)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bookload-k6-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := writeScripts(dir); err != nil {
		return nil, fmt.Errorf("k6 scripts: %w", err)
	}
	// An empty config file: a user's ~/.config/k6/config.json must not change
	// the test.
	cfg := filepath.Join(dir, "k6-config.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "samples.json")
	args := []string{
		"run", "--quiet", "--no-color", "--no-usage-report", "--no-thresholds",
		"--address", "", // no REST API server (two runs at once would fight over :6565)
		"--config", cfg,
		"--summary-mode", "disabled",
		"--log-output", "stderr",
		"--system-tags", "status,error_code,scenario",
		"--out", "json=" + out,
		filepath.Join(dir, k6scripts.ConstantArrivalRate),
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	env, droppedEnv := childEnv(scriptEnv)
	cmd.Env = env
	tail := &tailBuffer{max: 8 << 10}
	var sink io.Writer = tail
	if e.Stderr != nil {
		sink = io.MultiWriter(tail, e.Stderr)
	}
	cmd.Stdout, cmd.Stderr = sink, sink
	cmd.SysProcAttr = sysProcAttr() // own process group: our Ctrl-C is ours to pass on
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("k6: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	// While k6 runs: read its samples as it writes them, for the progress
	// line; stop it gracefully (SIGINT, then SIGKILL) when ctx is cancelled.
	var parsed Output
	rd := &lineReader{path: out}
	var waitErr error
	interrupted := false
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var killAt <-chan time.Time
	// A k6 that does not finish long after its duration and grace period is
	// stopped as on Ctrl-C, and the repetition fails.
	budget := req.Profile.Duration.Std() + req.Scenario.Timeout.Std() + 60*time.Second
	overdue := time.After(budget)
	late := false
loop:
	for {
		select {
		case waitErr = <-waited:
			break loop
		case <-overdue:
			late = true
			_ = cmd.Process.Signal(os.Interrupt)
			killAt = time.After(5 * time.Second)
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				_ = cmd.Process.Signal(os.Interrupt)
				killAt = time.After(5 * time.Second)
			}
		case <-killAt:
			_ = cmd.Process.Kill()
		case <-tick.C:
			if err := rd.read(&parsed, false); err != nil && !interrupted {
				_ = cmd.Process.Kill()
				<-waited //nolint:errcheck // killed just above: its exit status adds nothing to the output error
				return nil, fmt.Errorf("k6 output %s: %w", out, err)
			}
			if live != nil {
				n, errs := parsed.Counts()
				live(engine.Live{Elapsed: time.Since(started), Requests: n, Errors: errs})
			}
		}
	}
	if interrupted || ctx.Err() != nil {
		return &engine.Result{Engine: Name, Interrupted: true}, nil
	}
	if late {
		return nil, fmt.Errorf("k6 was still running %v after it started (duration %s); stopped it%s", budget, req.Profile.Duration, indent(tail.String()))
	}
	if waitErr != nil {
		return nil, fmt.Errorf("k6 %s failed: %w%s", Version, waitErr, indent(tail.String()))
	}
	if err := rd.read(&parsed, true); err != nil {
		return nil, fmt.Errorf("k6 output %s: %w%s", out, err, indent(tail.String()))
	}
	if parsed.Lines() == 0 {
		return nil, fmt.Errorf("k6 wrote no samples to %s%s", out, indent(tail.String()))
	}
	period := Period(req.Profile.QPS)
	sum, err := parsed.Summarize(period)
	if err != nil {
		return nil, fmt.Errorf("k6 output %s: %w", out, err)
	}
	if sum.Requests == 0 && sum.Dropped == 0 {
		return nil, fmt.Errorf("k6 recorded no HTTP requests (no http_req_duration samples in %d lines of output)%s", parsed.Lines(), indent(tail.String()))
	}
	dur := req.Profile.Duration.Std()
	res := &engine.Result{
		Engine:       Name,
		Start:        sum.ScheduleStart,
		Duration:     dur,
		RequestedQPS: req.Profile.QPS,
		ActualQPS:    float64(sum.Requests) / dur.Seconds(),
		Requests:     sum.Requests,
		Errors:       sum.Errors,
		Codes:        sum.Codes,
		Latency:      sum.Latency,
		Metadata: map[string]any{
			"k6_version":         version(bin),
			"k6_binary":          bin,
			"script":             "load/k6/" + k6scripts.ConstantArrivalRate,
			"executor":           "constant-arrival-rate",
			"vus":                req.Profile.Connections,
			"connection_reuse":   req.Scenario.KeepAlive,
			"url":                req.Target.RequestURL(req.Scenario.Path),
			"dropped_iterations": sum.Dropped,
			"ticks_expected":     int(dur/period) + 1, // the tick at the very end may or may not fire
			"ticks_seen":         sum.Ticks,
			"plain_latency":      "http_req_blocked + http_req_duration (from asking for a connection to the last byte, as fortio measures)",
			"corrected_latency":  CorrectedNote,
			"scheduling_delay_ms": map[string]float64{
				"p50": float64(sum.Delay.ValueAtQuantile(50)) / 1000, "p99": float64(sum.Delay.ValueAtQuantile(99)) / 1000,
				"max": float64(sum.Delay.Max()) / 1000,
			},
			"http_req_duration_ms": latency.Summarize(sum.Durations, 0),
		},
	}
	if len(droppedEnv) > 0 {
		res.Metadata["k6_env_not_passed"] = droppedEnv
	}
	return res, nil
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "\nk6 said:\n  " + strings.ReplaceAll(s, "\n", "\n  ")
}

var versions sync.Map // binary -> version string

// version is `k6 version`'s first word after "k6", e.g. v1.8.1.
func version(bin string) string {
	if v, ok := versions.Load(bin); ok {
		return v.(string)
	}
	v := "unknown"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b, err := exec.CommandContext(ctx, bin, "version").Output(); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 2 && f[0] == "k6" {
			v = f[1]
		}
	}
	versions.Store(bin, v)
	return v
}

// lineReader reads the complete lines a growing file has gained since the
// last call.
type lineReader struct {
	path    string
	f       *os.File
	r       *bufio.Reader
	partial []byte
}

// read feeds every new complete line to o; final also feeds a last line
// without a newline, and closes the file.
func (lr *lineReader) read(o *Output, final bool) error {
	if lr.f == nil {
		f, err := os.Open(lr.path)
		if errors.Is(err, os.ErrNotExist) && !final {
			return nil // k6 has not created it yet
		}
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("k6 did not write its JSON output")
		}
		if err != nil {
			return err
		}
		lr.f, lr.r = f, bufio.NewReaderSize(f, 256<<10)
	}
	if final {
		defer lr.f.Close()
	}
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			lr.partial = append(lr.partial, chunk...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if errors.Is(err, io.EOF) {
			lr.partial = append(lr.partial, chunk...)
			if final && len(bytes.TrimSpace(lr.partial)) > 0 {
				line := lr.partial
				lr.partial = nil
				return o.Feed(line)
			}
			return nil
		}
		line := chunk
		if len(lr.partial) > 0 {
			line = append(lr.partial, chunk...)
			lr.partial = nil
		}
		if err := o.Feed(line); err != nil {
			return err
		}
	}
}
