package clustercost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// PrometheusSource is cluster_cost.source with Prometheus.
const PrometheusSource = "Prometheus (cAdvisor's metrics): increase(container_cpu_usage_seconds_total) over the window, container_memory_working_set_bytes at each step"

// PromQL of a window: CPU-seconds per container over the window (increase
// copes with counter resets, as the summary arithmetic does), and the
// working set per container.
const (
	promCPU    = `sum by (namespace, pod, container) (increase(container_cpu_usage_seconds_total{container!="", container!="POD"}[%ds]))`
	promMemory = `sum by (namespace, pod, container) (container_memory_working_set_bytes{container!="", container!="POD"})`
)

// Prometheus measures a window's cost from a Prometheus that scrapes the
// kubelets' cAdvisor metrics: an alternative to the summary API where the
// API server's node proxy is not allowed. Its resolution is Prometheus's
// scrape interval (increase() extrapolates to the window's ends), coarser
// than the summary API's samples at the window's ends.
type Prometheus struct {
	// URL is Prometheus's base URL (its HTTP API under /api/v1/).
	URL string
	// API, if not nil, gives the pods' labels (waypoints, ztunnel, istiod,
	// load clients); without it containers are sorted by their names only.
	API           *kube.API
	AppNamespaces []string
	// Step is the memory query's resolution; 0 means 5 s.
	Step   time.Duration
	Client *http.Client
	Now    func() time.Time
}

// ParsePrometheusURL checks a --prometheus value.
func ParsePrometheusURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--prometheus %q: want Prometheus's base URL, e.g. http://127.0.0.1:9090", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// Name implements Source.
func (p *Prometheus) Name() string { return PrometheusSource }

func (p *Prometheus) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// query runs an instant (at set) or range query and returns its series.
func (p *Prometheus) query(ctx context.Context, path string, q url.Values) ([]promSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u := p.URL + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("prometheus %s: HTTP %d, not its API's JSON: %.120q", path, resp.StatusCode, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus %s: %s (HTTP %d) for %s", path, r.Error, resp.StatusCode, q.Get("query"))
	}
	return r.Data.Result, nil
}

func promValue(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func promKey(m map[string]string) key { return key{m["namespace"], m["pod"], m["container"]} }

func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// Probe implements Source: Prometheus answers and has cAdvisor's CPU series.
func (p *Prometheus) Probe(ctx context.Context) error {
	res, err := p.query(ctx, "/api/v1/query", url.Values{"query": {`count(container_cpu_usage_seconds_total{container!=""})`}})
	if err != nil {
		return fmt.Errorf("cluster cost: %w", err)
	}
	if len(res) == 0 {
		return fmt.Errorf("cluster cost: prometheus at %s has no container_cpu_usage_seconds_total series: does it scrape the kubelets' cAdvisor metrics?", p.URL)
	}
	return nil
}

// Begin implements Source.
func (p *Prometheus) Begin(ctx context.Context) (Window, error) {
	cls := NewClassifier(p.AppNamespaces)
	if p.API != nil {
		if err := cls.Learn(ctx, p.API); err != nil {
			return nil, fmt.Errorf("cluster cost: listing pods: %w", err)
		}
	}
	return &promWindow{p: p, cls: cls, start: p.now()}, nil
}

type promWindow struct {
	p     *Prometheus
	cls   *Classifier
	start time.Time
}

// Stop implements Window. A failed CPU query leaves the cost without
// groups, and says why.
func (w *promWindow) Stop() *Cost {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	end := w.p.now()
	var notes []string
	if w.p.API != nil {
		if err := w.cls.Learn(ctx, w.p.API); err != nil {
			notes = append(notes, "pods made during the window not classified by labels: "+err.Error())
		}
	} else {
		notes = append(notes, "no API server: containers sorted by pod and container names only")
	}
	secs := int(math.Ceil(end.Sub(w.start).Seconds()))
	cpu, err := w.p.query(ctx, "/api/v1/query", url.Values{"query": {fmt.Sprintf(promCPU, max(secs, 1))}, "time": {promTime(end)}})
	if err != nil {
		return &Cost{Source: PrometheusSource, WindowSeconds: end.Sub(w.start).Seconds(), Notes: append(notes, err.Error())}
	}
	acc := NewAccumulator(w.start)
	acc.end = end
	for _, s := range cpu {
		if v, ok := promValue(s.Value[1]); ok && v > 0 {
			acc.cpu[promKey(s.Metric)] += uint64(v * 1e9)
			acc.last[promKey(s.Metric)] = point{}
		}
	}
	step := w.p.Step
	if step <= 0 {
		step = 5 * time.Second
	}
	mem, err := w.p.query(ctx, "/api/v1/query_range", url.Values{"query": {promMemory}, "start": {promTime(w.start)}, "end": {promTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}})
	if err != nil {
		notes = append(notes, "no peak memory: "+err.Error())
	}
	byTime := map[string]map[key]uint64{}
	var times []string
	for _, s := range mem {
		for _, tv := range s.Values {
			t := fmt.Sprint(tv[0])
			v, ok := promValue(tv[1])
			if !ok {
				continue
			}
			if byTime[t] == nil {
				byTime[t] = map[key]uint64{}
				times = append(times, t)
			}
			byTime[t][promKey(s.Metric)] += uint64(v)
		}
	}
	for _, t := range times {
		acc.mems = append(acc.mems, byTime[t])
	}
	c := acc.Cost(w.cls)
	c.Source = PrometheusSource
	c.Notes = append(c.Notes, notes...)
	return c
}
