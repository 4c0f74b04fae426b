package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// benchOutcome is a bench of every part on synthetic numbers: the floor's
// p50 floorP50, details' tuned p50 detailsP50.
func benchOutcome(floorP50, detailsP50 float64, ran ...string) *Outcome {
	return &Outcome{Plan: repoPlan(), Ran: ran, Timing: QuickTiming, Started: time.Now(), Finished: time.Now(),
		Stacks:       []local.Config{{PortBase: 20080, Profile: "tuned"}, {PortBase: 20180, Profile: "legacy"}},
		Floor:        map[bool]*Measure{false: latency("echo", floorP50, 0.2), true: latency("echo", floorP50, 0.2)},
		FloorProcess: map[bool]*Measure{},
		Alone: map[string]map[bool]*Measure{
			"details": {false: latency("tuned", detailsP50, 1, "legacy", 30.0, 45.0), true: latency("tuned", detailsP50, 1)},
			"ratings": {false: latency("tuned", 0.17, 1, "legacy", 0.3, 2.0), true: latency("tuned", 0.17, 1)},
		},
		AloneBusy: map[string]*Measure{}, Soak: soakOf(61, nil, 0),
	}
}

// TestOnlyKeepsTheRest: a bench of one part replaces that part's rows and
// sections of BENCHMARKS.md and keeps every other part's, the header and the
// cluster section; a file without blocks is not overwritten.
func TestOnlyKeepsTheRest(t *testing.T) {
	md := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	full := benchOutcome(0.1, 0.15, names(repoPlan().Parts)...)
	if err := WriteFile(md, full, Config{Command: "bookload bench", Out: "results/full"}); err != nil {
		t.Fatal(err)
	}
	cluster := ClusterBegin + "\n\n## Cluster\n\n| a |\n" + ClusterEnd + "\n"
	b, _ := os.ReadFile(md)
	if err := os.WriteFile(md, append(b, "\n"+cluster...), 0o644); err != nil {
		t.Fatal(err)
	}
	before := string(b)

	// details again, now at 0.25 ms on a floor of 0.12 ms; ratings was not
	// measured this time (its numbers here would be what a bug shows).
	only := benchOutcome(0.12, 0.25, "floor", "details")
	only.Alone["ratings"] = nil
	only.Soak = nil
	if err := WriteFile(md, only, Config{Command: "bookload bench --only details", Out: "results/only", Only: "details"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(md)
	after := string(b)
	for _, want := range []string{
		"| details | details `/details/0` | uniform | tuned | 100.0 | 0 | 0.250 |", // replaced
		"| floor | floor: fortio echo (in-process) | burst | - | 100.0 | 0 | 0.120 |",
		lineWith(before, "| ratings | ratings `/ratings/0` | uniform | tuned"), // kept
		lineWith(before, "| ratings | ratings alone"),
		lineWith(before, "| soak | soak:"),
		"| +0.0 | **yes** |", // the soak's section
		"Written by `bookload bench` (`make bench`)",
		"`bookload bench --only details` measured floor, details (runs in `results/only`)",
		cluster,
	} {
		if want == "" || !strings.Contains(after, want) {
			t.Errorf("after --only details, BENCHMARKS.md lacks %q", want)
		}
	}
	if strings.Contains(after, "0.150 |") || strings.Count(after, ClusterBegin) != 1 {
		t.Errorf("the old details rows or a second cluster section remain:\n%s", after)
	}
	if lineWith(after, "| details | details alone 100/10, uniform") == "" || !strings.Contains(lineWith(after, "| details | details alone 100/10, uniform"), "| no |") {
		t.Errorf("details at 0.25 ms on a 0.12 ms floor: %q", lineWith(after, "| details | details alone 100/10, uniform"))
	}

	// The file as it was before parts: kept, with an error saying why.
	if err := os.WriteFile(md, []byte("# Benchmarks\n\nold numbers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckMerge(md); err == nil {
		t.Error("CheckMerge accepts a file without blocks")
	}
	err := WriteFile(md, only, Config{Command: "bookload bench --only details", Only: "details"})
	if b, _ := os.ReadFile(md); err == nil || !strings.Contains(err.Error(), "run the whole bench once") || string(b) != "# Benchmarks\n\nold numbers\n" {
		t.Errorf("a file without blocks: err %v, now %q", err, b)
	}
}
