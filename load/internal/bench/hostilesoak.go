package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hostile"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// The hostile soak: against each service of the tuned stack in turn, rounds
// of slow heads (a request head one byte every half second, never
// finished: the server closes them at its head deadline) and non-readers
// (GET /metrics pipelined on a connection whose answers are never read),
// together, with a pause after each round. The service's RSS is read before
// the first round, after each round and after the last pause; /health is
// asked on a new connection every half second during the rounds. Judged:
// the memory comes back (after the last pause within hostile_rss_back_mb of
// before) and /health is answered within hostile_health_ms throughout.

var (
	hostileFields  = []string{"rounds", "slow_heads", "non_readers", "pipelined", "round", "pause"}
	hostileTargets = []string{"hostile_rss_back_mb", "hostile_health_ms"}
)

// slowHeadEvery is how often a slow head sends its next byte.
const slowHeadEvery = 500 * time.Millisecond

// hostileSpec is a hostile-soak part's own fields.
type hostileSpec struct {
	Rounds, SlowHeads, NonReaders, Pipelined int
	Round, Pause                             time.Duration // how long a round holds its connections; the quiet after it
}

func parseHostile(r *reader, f map[string]*yaml.Node, path string, pt *Part) {
	sp := &hostileSpec{
		Rounds: r.integer(f["rounds"], path+".rounds", 1), SlowHeads: r.integer(f["slow_heads"], path+".slow_heads", 0),
		NonReaders: r.integer(f["non_readers"], path+".non_readers", 0), Pipelined: r.integer(f["pipelined"], path+".pipelined", 1),
	}
	if f["round"] != nil {
		sp.Round = r.duration(f["round"], path+".round", false)
	}
	if f["pause"] != nil {
		sp.Pause = r.duration(f["pause"], path+".pause", false)
	}
	// Below every service's connection limit (productpage divides it among
	// its workers): beyond it connections wait in the backlog and the flood
	// measures the queue, not the memory each connection costs.
	if n := f["slow_heads"]; n != nil && sp.SlowHeads+sp.NonReaders+1 > maxHostileConns {
		r.fail(n, path+".slow_heads", "slow_heads + non_readers + 1 (the /health probe) is %d: keep it within %d, below every service's connection limit", sp.SlowHeads+sp.NonReaders+1, maxHostileConns)
	}
	pt.Spec = sp
}

// maxHostileConns is half of HTTP_MAX_CONNECTIONS' default (1024): within
// what one of productpage's two workers holds.
const maxHostileConns = 512

// HostileSoak is the hostile soak's measurement.
type HostileSoak struct {
	Spec     hostileSpec
	Services []HostileService
}

// HostileService is one service's readings.
type HostileService struct {
	Service                 string
	BeforeKB, FinalKB       int64   // before the first round; after the last pause
	AfterRoundKB            []int64 // right after each round's connections closed
	PeakKB                  int64   // highest reading during the rounds
	HealthMax               time.Duration
	HealthAsked, HealthFail int
	HealthWhy               string // the first failure
	Dialed, Closed          int    // slow heads over all rounds: made, closed by the server
	Err                     string // what kept a round from running
}

// BackMB is how far above its start the service's RSS stayed, MB.
func (h HostileService) BackMB() float64 { return float64(h.FinalKB-h.BeforeKB) / 1024 }

// measureHostile floods each tuned service in turn.
func measureHostile(ctx context.Context, b *bench, pt *Part) error {
	sp := *pt.Spec.(*hostileSpec)
	if b.cfg.Quick {
		sp.Rounds, sp.Round, sp.Pause = 2, 2*time.Second, 2*time.Second
	}
	hs := &HostileSoak{Spec: sp}
	b.o.Hostile = hs
	for _, svc := range local.Services {
		pg := b.groups["tuned"][svc]
		base := b.targetOf("tuned", svc).URL
		addr := strings.TrimPrefix(base, "http://")
		h := HostileService{Service: svc, BeforeKB: proc.Group(pg).RSSkB}
		b.logf("hostile soak: %s: %d rounds of %d slow heads and %d non-readers (%d GET /metrics each) for %v, %v pause after each; RSS %.0f MB",
			svc, sp.Rounds, sp.SlowHeads, sp.NonReaders, sp.Pipelined, sp.Round, sp.Pause, float64(h.BeforeKB)/1024)
		for round := 0; round < sp.Rounds && ctx.Err() == nil; round++ {
			if err := hostileRound(ctx, sp, addr, base, pg, &h); err != nil {
				h.Err = err.Error()
				break
			}
			h.AfterRoundKB = append(h.AfterRoundKB, proc.Group(pg).RSSkB)
			b.logf("hostile soak: %s: round %d: RSS %.0f MB after, peak %.0f MB; /health slowest %v, %d of %d failed",
				svc, round+1, float64(h.AfterRoundKB[round])/1024, float64(h.PeakKB)/1024, h.HealthMax.Round(time.Millisecond), h.HealthFail, h.HealthAsked)
			sleep(ctx, sp.Pause)
		}
		h.FinalKB = proc.Group(pg).RSSkB
		hs.Services = append(hs.Services, h)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// hostileRound holds sp's slow heads and non-readers on addr for sp.Round,
// asking base for /health and reading the group's RSS every half second.
func hostileRound(ctx context.Context, sp hostileSpec, addr, base string, pg int, h *HostileService) error {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(slowHeadEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			h.PeakKB = max(h.PeakKB, proc.Group(pg).RSSkB)
			took, err := hostile.Health(base, 5*time.Second)
			h.HealthAsked++
			h.HealthMax = max(h.HealthMax, took)
			if err != nil {
				h.HealthFail++
				if h.HealthWhy == "" {
					h.HealthWhy = fmt.Sprintf("after %v: %v", took.Round(time.Millisecond), err)
				}
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	start := time.Now()
	readers, err := hostile.NonReaders(addr, "/metrics", sp.NonReaders, sp.Pipelined, sp.Round)
	if err != nil {
		return err
	}
	defer hostile.Close(readers)
	dialed, closed := hostile.SlowHeads(ctx, addr, sp.SlowHeads, slowHeadEvery, sp.Round)
	h.Dialed += dialed
	h.Closed += closed
	sleep(ctx, sp.Round-time.Since(start))
	return nil
}

// judgeHostile judges every service: memory back, /health answered.
func judgeHostile(o *Outcome, pt *Part) []Verdict {
	hs := o.Hostile
	backT, healthT := o.Plan.Targets.T("hostile_rss_back_mb"), o.Plan.Targets.T("hostile_health_ms")
	sp := pt.Spec.(*hostileSpec)
	if hs != nil {
		sp = &hs.Spec
	}
	subject := func(svc string) string {
		return fmt.Sprintf("hostile soak, %s: RSS after the last pause %s MB over before, /health %s ms during %d rounds of %d slow heads + %d non-readers",
			svc, backT.Text(), healthT.Text(), sp.Rounds, sp.SlowHeads, sp.NonReaders)
	}
	if hs == nil {
		return []Verdict{{Targets: hostileTargets, Subject: subject("every service"), Measured: "not run"}}
	}
	var out []Verdict
	for _, h := range hs.Services {
		v := Verdict{Targets: hostileTargets, Subject: subject(h.Service)}
		if h.Err != "" || len(h.AfterRoundKB) == 0 {
			v.Measured = "not measured: " + h.Err
			out = append(out, v)
			continue
		}
		slowest := float64(h.HealthMax) / float64(time.Millisecond)
		v.Known = true
		v.Met = backT.Met(h.BackMB()) && healthT.Met(slowest) && h.HealthFail == 0
		v.Measured = fmt.Sprintf("%.0f → peak %.0f → %.0f MB (%+.1f); /health slowest %.0f ms, %d of %d failed", float64(h.BeforeKB)/1024, float64(h.PeakKB)/1024,
			float64(h.FinalKB)/1024, h.BackMB(), slowest, h.HealthFail, h.HealthAsked)
		switch {
		case v.Met:
			v.Analysis = "-"
		case !backT.Met(h.BackMB()):
			v.Analysis = "memory kept after the clients left: what the flood allocated is not returned (see the hostile soak's rounds: growth shrinking round after round is a pool filling, steady growth a leak)"
		case h.HealthWhy != "":
			v.Analysis = "/health waited behind the flood: " + h.HealthWhy
		default:
			v.Analysis = fmt.Sprintf("/health waited behind the flood: %.0f ms at the slowest", slowest)
		}
		out = append(out, v)
	}
	return out
}

// hostileSection is the hostile soak's section of BENCHMARKS.md.
func hostileSection(o *Outcome, pt *Part) string {
	sp := pt.Spec.(*hostileSpec)
	if o.Hostile != nil {
		sp = &o.Hostile.Spec
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Hostile soak (tuned, each service in turn)\n\n")
	fmt.Fprintf(&b, "%d rounds per service, each holding %d slow heads (a request head one byte every %v, never finished: the service closes them at its head deadline) and %d non-readers (%d `GET /metrics` pipelined, never read) for %v, then %v without them. ",
		sp.Rounds, sp.SlowHeads, slowHeadEvery, sp.NonReaders, sp.Pipelined, sp.Round, sp.Pause)
	b.WriteString("RSS (VmRSS summed over the process group) before the first round, after each round (its connections closed), and after the last pause; the peak is the highest reading during the rounds, every half second. `/health` is asked on a new connection every half second during the rounds.\n\n")
	if o.Hostile == nil {
		b.WriteString("Not run.\n")
		return b.String()
	}
	b.WriteString("| service | before MB | after each round MB | peak MB | after the last pause MB | kept MB | slow heads made / closed by the service | /health slowest ms | /health failed |\n|---|--:|---|--:|--:|--:|--:|--:|--:|\n")
	for _, h := range o.Hostile.Services {
		var rounds []string
		for _, kb := range h.AfterRoundKB {
			rounds = append(rounds, strconv.FormatFloat(float64(kb)/1024, 'f', 0, 64))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %.0f | %.0f | %+.1f | %d / %d | %.0f | %d of %d |\n", h.Service, float64(h.BeforeKB)/1024, strings.Join(rounds, ", "),
			float64(h.PeakKB)/1024, float64(h.FinalKB)/1024, h.BackMB(), h.Dialed, h.Closed, float64(h.HealthMax)/float64(time.Millisecond), h.HealthFail, h.HealthAsked)
	}
	return b.String()
}
