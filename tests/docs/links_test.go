package docs

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Run and test", "run-and-test"},
		{"Server-Timing (ours)", "server-timing-ours"},
		{"`HTTP_NODELAY` and `SHUTDOWN_TIMEOUT_SECONDS`", "http_nodelay-and-shutdown_timeout_seconds"},
		{"Differences and verdicts (`--margin`)", "differences-and-verdicts---margin"},
		{"The bookload agent (`bookload+http`)", "the-bookload-agent-bookloadhttp"},
		{"a - b", "a---b"},
		{"**Bold** and _kept_", "bold-and-_kept_"},
		{"See [the contract](docs/contract.md)", "see-the-contract"},
		{"Où: 2026-11-25", "où-2026-11-25"},
		{"C'est <em>ça</em>?", "cest-ça"},
	} {
		if got := Slug(c.heading); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestHeadingsNumberRepeatsAndSkipCode(t *testing.T) {
	md := "# Notes\n\n## Setup\n\n```\n# not a heading\n```\n\n## Setup\n\n<a id=\"custom\"></a>\n## Setup ##\n"
	var got []string
	for _, h := range Headings([]byte(md)) {
		got = append(got, h.anchor)
	}
	want := "notes setup setup-1 custom setup-2"
	if strings.Join(got, " ") != want {
		t.Errorf("anchors %q, want %q", strings.Join(got, " "), want)
	}
}

func TestGoodTreeIsClean(t *testing.T) {
	problems, err := Check(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("unexpected: %s", p)
	}
}

// Every kind of break is found once, with the file, the line and the reference.
func TestBrokenTreeNamesEachBreak(t *testing.T) {
	problems, err := Check(filepath.Join("testdata", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:5: missing.md: no such file or folder`,
		`README.md:7: #nowhere: no heading with anchor #nowhere in README.md`,
		`README.md:9: sub/NOTES.md#gone: no heading with anchor #gone in sub/NOTES.md`,
		`README.md:11: gone/: no such file or folder`,
		`sub/code.py:2: README, "Vanished section": no such section in README.md`,
		`sub/code.py:3: DESIGN.md, "Anything": no such file`,
		`sub/code.py:5: README.md#no-such-anchor: no heading with anchor #no-such-anchor in README.md`,
		`sub/code.py:7: README, "Really gone": no such section in README.md`,
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The repository itself: what make lint's docs suite runs. This folder is
// left out: its sources and fixtures cite what does not exist on purpose.
func TestRepository(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	problems, err := Check(root, "tests/docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
