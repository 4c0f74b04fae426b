package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
)

// Concurrent: every round's targets run at once, each at half the rate and
// half the connections, the warm-ups too; each still gets its own
// repetition file.
func TestConcurrentRounds(t *testing.T) {
	var mu sync.Mutex
	arrived := map[string]int{} // round -> targets that started it
	shares := map[string]bool{}
	f := &fakeEngine{}
	f.onRun = func(ctx context.Context, _ int, req engine.Request) (*engine.Result, error) {
		round := fmt.Sprintf("%s/%d", req.Profile.Name, req.Repetition)
		mu.Lock()
		arrived[round]++
		shares[fmt.Sprintf("%s %g %d", req.Profile.Name, req.Profile.QPS, req.Profile.Connections)] = true
		mu.Unlock()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) { // both targets of the round must be running
			mu.Lock()
			n := arrived[round]
			mu.Unlock()
			if n == 2 {
				return nil, nil
			}
			time.Sleep(time.Millisecond)
		}
		return nil, errors.New("ran alone: " + round)
	}
	s := testScenario(time.Second)
	s.Profiles[0].Connections, s.Profiles[1].Connections = 2, 4
	cfg := config(t, f, s, targets("A", "B"))
	cfg.Interleave = Concurrent
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Run.Done) != 12 || out.Run.Interleave != Concurrent {
		t.Errorf("%d repetitions, interleave %q", len(out.Run.Done), out.Run.Interleave)
	}
	for _, want := range []string{"low 5 1", "high 10 2"} {
		if !shares[want] {
			t.Errorf("no run at the share %q: %v", want, shares)
		}
	}
	if len(shares) != 2 {
		t.Errorf("runs at other loads than the shares: %v", shares)
	}
}

func TestConcurrentNeedsEvenConnections(t *testing.T) {
	cfg := config(t, &fakeEngine{}, testScenario(0), targets("A", "B", "C"))
	cfg.Interleave = Concurrent
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "profile low has 1 connections, which 3 targets") {
		t.Errorf("err %v", err)
	}
	cfg.Interleave = "sideways"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `interleave "sideways"`) {
		t.Errorf("err %v", err)
	}
}
