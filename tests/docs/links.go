// Package docs checks the repository's cross-references, without network:
// every relative Markdown link resolves to a file or folder, every #anchor to
// a heading of its target (GitHub's slugs), and every section a file cites by
// name in prose or a comment (`README, "Hostile input"`, `docs/contract.md,
// "Everywhere"`, `load/README.md#run`) exists. External links are not fetched.
// make lint runs it as the docs suite.
package docs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Problem is one broken reference: where it is, what it says, and why it fails.
type Problem struct {
	File string // slash-separated, relative to the checked root
	Line int
	Ref  string
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Ref, p.Why) }

// skipDirs are build outputs, dependencies and fixtures, never documentation
// of this repository.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, ".venv": true, "target": true, "vendor": true,
	"testdata": true, "__pycache__": true, ".pytest_cache": true, "bin": true,
	"results": true, "test-results": true, ".tools": true, ".bookinfo": true,
}

// Slug is GitHub's anchor for a heading: its rendered text lowercased, every
// character but letters, digits, spaces, hyphens and underscores dropped, and
// each space turned into a hyphen (no collapsing: "a - b" is "a---b").
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(plainText(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[([^\]]+)\]:\s*(\S+)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	atxHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)
	fence      = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
)

// plainText is a heading as GitHub renders it to text: links become their
// text, code spans their content, emphasis and HTML tags disappear.
func plainText(s string) string {
	s = inlineLink.ReplaceAllString(s, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "**", "", "__", "").Replace(s)
	return strings.TrimSpace(s)
}

// mdLine is one line of a Markdown file outside fenced code blocks.
type mdLine struct {
	n    int
	text string
}

// proseLines drops fenced code blocks, whose headings and links are not ones.
func proseLines(data []byte) []mdLine {
	var out []mdLine
	open := ""
	for i, l := range strings.Split(string(data), "\n") {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case open == "":
				open = m[1]
			case strings.HasPrefix(m[1], open[:1]) && len(m[1]) >= len(open) && strings.TrimSpace(l) == m[1]:
				open = ""
			}
			continue
		}
		if open == "" {
			out = append(out, mdLine{i + 1, l})
		}
	}
	return out
}

// heading is one heading of a Markdown file: its rendered text and anchor.
type heading struct{ text, anchor string }

// Headings lists a Markdown file's headings with GitHub's anchors, a repeated
// slug numbered -1, -2, ... as GitHub does.
func Headings(data []byte) []heading {
	var hs []heading
	seen := map[string]int{}
	for _, l := range proseLines(data) {
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil {
			for _, a := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
				hs = append(hs, heading{a[1], a[1]})
			}
			continue
		}
		s := Slug(m[2])
		a := s
		if k := seen[s]; k > 0 {
			a = fmt.Sprintf("%s-%d", s, k)
		}
		seen[s]++
		hs = append(hs, heading{plainText(m[2]), a})
	}
	return hs
}

// checker holds what one run has read, so each target is parsed once.
type checker struct {
	root     string
	headings map[string][]heading // by absolute path of a Markdown file
	problems []Problem
}

// Check walks root and returns every broken reference, sorted by file and
// line. skip names folders (relative to root, slash-separated) not to read.
func Check(root string, skip ...string) ([]Problem, error) {
	c := &checker{root: root, headings: map[string][]heading{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if path != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") && d.Name() != ".github" || slices.Contains(skip, filepath.ToSlash(rel))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil // binary
		}
		if strings.HasSuffix(path, ".md") {
			c.markdown(path, data)
		}
		c.citations(path, data)
		return nil
	})
	sort.Slice(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return c.problems, err
}

func (c *checker) report(path string, line int, ref, why string) {
	c.problems = append(c.problems, Problem{c.rel(path), line, ref, why})
}

// headingsOf parses a Markdown file once; ok is false when it cannot be read.
func (c *checker) headingsOf(path string) ([]heading, bool) {
	if hs, ok := c.headings[path]; ok {
		return hs, true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	hs := Headings(data)
	c.headings[path] = hs
	return hs, true
}

// markdown checks a Markdown file's links and reference definitions.
func (c *checker) markdown(path string, data []byte) {
	for _, l := range proseLines(data) {
		text := codeSpan.ReplaceAllString(l.text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[2])
		}
		if m := refDef.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[2])
		}
		for _, t := range targets {
			c.link(path, l.n, strings.Trim(t, "<>"))
		}
	}
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// link checks one link target written in the Markdown file at path.
func (c *checker) link(path string, line int, target string) {
	if target == "" || scheme.MatchString(target) {
		return // external: not fetched
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := path
	if file != "" {
		if strings.HasPrefix(file, "/") {
			dest = filepath.Join(c.root, filepath.FromSlash(file))
		} else {
			dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		if _, err := os.Stat(dest); err != nil {
			c.report(path, line, target, "no such file or folder")
			return
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return
	}
	c.checkAnchor(path, line, target, dest, anchor)
}

// checkAnchor reports ref unless the Markdown file dest has a heading with
// that anchor.
func (c *checker) checkAnchor(from string, line int, ref, dest, anchor string) {
	hs, _ := c.headingsOf(dest)
	for _, h := range hs {
		if h.anchor == anchor {
			return
		}
	}
	c.report(from, line, ref, "no heading with anchor #"+anchor+" in "+c.rel(dest))
}

func (c *checker) rel(path string) string {
	r, err := filepath.Rel(c.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

var (
	// A named section: `README, "Hostile input"`, `docs/contract.md, "Everywhere"`,
	// `README's "Writes per response"`; the name may run onto a second
	// comment line.
	citation = regexp.MustCompile(`((?:[\w.-]+/)*(?:README|DESIGN)(?:\.md)?|(?:[\w.-]+/)*[\w.-]+\.md)(?:,|'s)\s+(?:(?:#+|//+|\*|--)\s+)?(?:sections?\s+)?"([^"\n]+(?:\n[^"\n]+)?)"`)
	// Further names after the first: `"A" and "B"`.
	moreNames = regexp.MustCompile(`^\s*(?:,|and|or)\s+"([^"\n]+(?:\n[^"\n]+)?)"`)
	// An anchor in a path outside Markdown links: load/README.md#run.
	anchorRef = regexp.MustCompile(`((?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)`)
	// The date of a DESIGN.md entry's heading.
	dated = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}:?\s*`)
	// A comment leader at the start of a continued line.
	leader = regexp.MustCompile(`\n\s*(?:#+|//+|\*|--|;+)?\s*`)
)

// citations checks the sections a file names, in code comments or prose.
func (c *checker) citations(path string, data []byte) {
	text := string(data)
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		doc := text[m[2]:m[3]]
		names := []string{text[m[4]:m[5]]}
		for rest := text[m[1]:]; ; {
			n := moreNames.FindStringSubmatchIndex(rest)
			if n == nil {
				break
			}
			names = append(names, rest[n[2]:n[3]])
			rest = rest[n[1]:]
		}
		line := 1 + strings.Count(text[:m[0]], "\n")
		for _, name := range names {
			c.section(path, line, doc, strings.TrimSpace(leader.ReplaceAllString(name, " ")))
		}
	}
	if strings.HasSuffix(path, ".md") {
		return // Markdown's own anchors are links, checked as such
	}
	for _, m := range anchorRef.FindAllStringSubmatchIndex(text, -1) {
		line := 1 + strings.Count(text[:m[0]], "\n")
		c.anchor(path, line, text[m[2]:m[3]], text[m[4]:m[5]])
	}
}

// resolve finds the Markdown file a citation names: a bare README or DESIGN
// is the nearest one up from the citing file; a path is relative to the
// citing file's folder, else to the root.
func (c *checker) resolve(from, doc string) (string, bool) {
	if !strings.HasSuffix(doc, ".md") {
		doc += ".md"
	}
	if !strings.Contains(doc, "/") {
		for dir := filepath.Dir(from); ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, doc)
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
			if dir == c.root || dir == filepath.Dir(dir) {
				break
			}
		}
	}
	for _, p := range []string{filepath.Join(filepath.Dir(from), doc), filepath.Join(c.root, doc)} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// section checks that doc has a heading called name, or one that begins so
// ("Server-Timing" names "Server-Timing (ours)"); a dated entry's date may be
// left out ("Hostile input" names "2026-11-23: Hostile input").
func (c *checker) section(from string, line int, doc, name string) {
	ref := fmt.Sprintf("%s, %q", doc, name)
	p, ok := c.resolve(from, doc)
	if !ok {
		c.report(from, line, ref, "no such file")
		return
	}
	want := Slug(name)
	hs, _ := c.headingsOf(p)
	for _, h := range hs {
		for _, a := range []string{h.anchor, Slug(dated.ReplaceAllString(h.text, ""))} {
			if a == want || strings.HasPrefix(a, want+"-") {
				return
			}
		}
	}
	c.report(from, line, ref, "no such section in "+c.rel(p))
}

func (c *checker) anchor(from string, line int, doc, anchor string) {
	ref := doc + "#" + anchor
	p, ok := c.resolve(from, doc)
	if !ok {
		c.report(from, line, ref, "no such file")
		return
	}
	c.checkAnchor(from, line, ref, p, anchor)
}
