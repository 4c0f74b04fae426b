package engine

import (
	"slices"
	"testing"

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
