package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportAndMarginFlags: a real run against a loopback server, exported
// as SMP, compared with a margin; bad --margin, --baseline and --format
// values are errors that name the flag and the value.
func TestExportAndMarginFlags(t *testing.T) {
	dir := t.TempDir()
	srv := okServer(t)
	sc := writeScenario(t, dir, tiny)
	out := filepath.Join(dir, "results")
	if stdout, code := capture(t, func() int {
		return runCmd([]string{sc, "--target", "a=" + srv.URL, "--target", "b=" + srv.URL, "--out", out, "--margin", "p99=50ms"})
	}); code != 0 || !strings.Contains(stdout, "- b vs a, tiny 100rps-2c: p99 ") {
		t.Fatalf("run: exit %d\n%s", code, stdout)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "*_tiny"))
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	file := filepath.Join(dir, "smp.json")
	if _, code := capture(t, func() int { return exportCmd([]string{"--format", "smp", runs[0], "-o", file}) }); code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	var doc struct {
		SMPVersion string `json:"smp_version"`
		Results    []struct {
			Result struct {
				MeshConfigID string `json:"mesh_config_id"`
			} `json:"performance_test_result"`
		} `json:"results"`
	}
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &doc); err != nil || doc.SMPVersion == "" || len(doc.Results) != 2 || doc.Results[1].Result.MeshConfigID != "b" {
		t.Errorf("export: %v\n%s", err, data)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", out, "--margin", "p99=abc"}, 2, `invalid value "p99=abc" for flag -margin: p99: "abc" is not a duration`},
		{[]string{"compare", out, "--margin", "p98=1ms"}, 2, `invalid value "p98=1ms" for flag -margin: unknown metric "p98"`},
		{[]string{"compare", out, "--baseline", "c"}, 1, `bookload compare: --baseline c: not a target of these runs (targets: a, b)`},
		{[]string{"export", runs[0], "--format", "xml"}, 2, `bookload export: --format xml: unknown format (want smp)`},
		{[]string{"export", out, out}, 1, `export takes one run directory`},
	} {
		stderr, code := captureStderr(t, func() int { return commands[c.args[0]].run(c.args[1:]) })
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("bookload %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
}
