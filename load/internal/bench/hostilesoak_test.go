package bench

import (
	"strings"
	"testing"
	"time"
)

// TestJudgeHostile: memory back within the bound and /health fast is met;
// memory kept, or a slow or failed /health, is not, and says which.
func TestJudgeHostile(t *testing.T) {
	p := repoPlan()
	pt := p.Part("hostile-soak")
	ok := HostileService{Service: "details", BeforeKB: 40 << 10, AfterRoundKB: []int64{60 << 10, 62 << 10, 63 << 10}, PeakKB: 80 << 10, FinalKB: 45 << 10,
		HealthMax: 30 * time.Millisecond, HealthAsked: 90}
	kept := ok
	kept.Service, kept.FinalKB = "ratings", 90<<10
	slow := ok
	slow.Service, slow.HealthMax, slow.HealthFail, slow.HealthWhy = "reviews", 5*time.Second, 2, "after 5s: timeout"
	o := &Outcome{Plan: p, Ran: []string{"hostile-soak"}, Hostile: &HostileSoak{Spec: *pt.Spec.(*hostileSpec), Services: []HostileService{ok, kept, slow}}}
	vs := Judge(o)
	if len(vs) != 3 {
		t.Fatalf("%d verdicts, want one per service: %+v", len(vs), vs)
	}
	if !vs[0].Known || !vs[0].Met || !strings.Contains(vs[0].Measured, "40 → peak 80 → 45 MB (+5.0)") {
		t.Errorf("details: %+v", vs[0])
	}
	if vs[1].Met || !strings.Contains(vs[1].Analysis, "memory kept") {
		t.Errorf("ratings kept 50 MB: %+v", vs[1])
	}
	if vs[2].Met || !strings.Contains(vs[2].Analysis, "after 5s: timeout") {
		t.Errorf("reviews' /health failed: %+v", vs[2])
	}
	md := writeMD(o)
	if !strings.Contains(md, "| ratings | 40 | 60, 62, 63 | 80 | 90 | +50.0 |") || !strings.Contains(md, "<!-- bench: part hostile-soak -->") {
		t.Errorf("BENCHMARKS.md lacks the hostile soak's rows:\n%s", md)
	}
	if vs := Judge(&Outcome{Plan: p, Ran: []string{"hostile-soak"}}); len(vs) != 1 || vs[0].Known {
		t.Errorf("not run: %+v", vs)
	}
}

// TestScenarioParts: the shipped experiments load with their files, the
// echo ones need no stacks, and the matrix's stacks stand for its settings.
func TestScenarioParts(t *testing.T) {
	p := repoPlan()
	for name, stacks := range map[string]bool{"echo-h1": false, "throughput-1c": false, "matrix-details": true} {
		pt := p.Part(name)
		if pt == nil || pt.Spec.(*scenarioSpec).Scenario == nil || needsStacks(pt) != stacks {
			t.Errorf("%s: %+v, stacks %v", name, pt, stacks)
		}
	}
	if a := p.Part("matrix-details").Spec.(*scenarioSpec).Against; len(a) != 2 || a[0] != (againstTarget{"no-mesh.nodelay", "tuned"}) {
		t.Errorf("matrix against %+v: want the baseline (tuned) first", a)
	}
	cases := []struct{ old, new, want string }{
		{"against: {no-mesh.nodelay: tuned, no-mesh.nagle: legacy}", "against: {no-mesh.nodelay: legacy, no-mesh.nagle: tuned}",
			`against.no-mesh.nodelay: target "no-mesh.nodelay": the legacy stack sets map[HTTP_NODELAY:false] on details`},
		{"against: {no-mesh.nodelay: tuned, no-mesh.nagle: legacy}", "against: {no-mesh.nodelay: tuned, no-mesh.fast: legacy}",
			`target "no-mesh.fast": want MODE.SETTING with SETTING one of nagle, nodelay, server-close`},
		{"against: {no-mesh.nodelay: tuned, no-mesh.nagle: legacy}", "against: {no-mesh.nodelay: tuned, no-mesh.nagle: old}", `no stack profile "old"`},
		{"    scenario: echo-h1\n", "    scenario: echo-h9\n", `parts[11].scenario: "echo-h9": open`},
		{"    scenario: echo-h1\n", "    scenario: echo-h1\n    against: {no-mesh.nodelay: tuned}\n", "an echo scenario runs against fortio's echo server in this process"},
		{"    scenario: throughput-1c\n    duration: 3s\n    repetitions: 3\n", "    scenario: throughput-1c\n    duration: 3s\n    repetitions: 3\n    targets: [page_p50_ms]\n",
			`a part of kind scenario is not judged on "page_p50_ms"`},
		{"    slow_heads: 200", "    slow_heads: 500", "slow_heads + non_readers + 1 (the /health probe) is 601: keep it within 512"},
		{"    pause: 20s", "    pause: 20", `parts[16].pause: must be a duration with a unit`},
	}
	for _, c := range cases {
		_, err := planWith(t, c.old, c.new)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.new, err, c.want)
		}
	}
}
