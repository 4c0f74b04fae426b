package engine

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestRunLabels(t *testing.T) {
	req := Request{
		Scenario: &scenario.Scenario{Name: "smoke"},
		Profile:  scenario.Profile{Name: "100rps-10c"},
		Target:   loadtarget.Target{Name: "tuned"},
	}
	if got, want := req.RunLabels(), []string{"smoke", "tuned", "100rps-10c", "warmup"}; !slices.Equal(got, want) {
		t.Errorf("warmup: %q, want %q", got, want)
	}
	req.Repetition = 3
	if got, want := req.RunLabels(), []string{"smoke", "tuned", "100rps-10c", "rep-03"}; !slices.Equal(got, want) {
		t.Errorf("repetition 3: %q, want %q", got, want)
	}
}

// ReportLive reports until stopped and never after stop has returned.
func TestReportLiveStopsForGood(t *testing.T) {
	var mu sync.Mutex
	calls, stopped, late := 0, false, false
	stop := ReportLive(func(Live) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		late = late || stopped
	}, func() Live { return Live{} })
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	mu.Lock()
	stopped = true
	n := calls
	mu.Unlock()
	time.Sleep(3 * LiveInterval)
	mu.Lock()
	defer mu.Unlock()
	if n < 2 {
		t.Errorf("%d progress reports before stop, want at least 2", n)
	}
	if late || calls != n {
		t.Errorf("live called after stop returned (%d calls, %d before stop)", calls, n)
	}
	ReportLive(nil, func() Live { t.Error("progress asked for without a live func"); return Live{} })()
}
