package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// BENCHMARKS.md is marked in blocks (benchmarks.md.tmpl) so that a bench of
// some parts (--only) replaces what those parts measured and keeps the rest:
//
//	keep NAME   the whole bench's (header, notes): kept as it was
//	log NAME    one line more per --only run
//	part NAME   the section of plan part NAME: replaced when NAME ran
//	rows NAME   a table whose rows start with their part: the rows of the
//	            parts that ran are replaced, the others kept, in plan order
//
// The cluster section (ClusterSection) is another bench's and is carried
// over as it was by every run.
var (
	blockStart = regexp.MustCompile(`^<!-- bench: (keep|log|part|rows) (\S+) -->$`)
	blockEnd   = "<!-- bench: end %s -->"
)

// block is a marked block of BENCHMARKS.md, or (kind "") the text between.
type block struct {
	kind, name string
	lines      []string // the body, without the markers
}

// blocks splits md into its marked blocks and the text between them.
func blocks(md string) []block {
	var out []block
	text := block{}
	lines := strings.SplitAfter(md, "\n")
	for i := 0; i < len(lines); i++ {
		m := blockStart.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			text.lines = append(text.lines, lines[i])
			continue
		}
		end := fmt.Sprintf(blockEnd, m[2])
		j := i + 1
		for j < len(lines) && strings.TrimRight(lines[j], "\n") != end {
			j++
		}
		if j == len(lines) { // unterminated: text, as the cluster section
			text.lines = append(text.lines, lines[i])
			continue
		}
		out = append(out, text, block{kind: m[1], name: m[2], lines: lines[i+1 : j]})
		text = block{}
		i = j
	}
	return append(out, text)
}

func (b block) String() string {
	if b.kind == "" {
		return strings.Join(b.lines, "")
	}
	return fmt.Sprintf("<!-- bench: %s %s -->\n%s"+blockEnd+"\n", b.kind, b.name, strings.Join(b.lines, ""), b.name)
}

var errNoBlocks = errors.New("it has no bench: blocks (written before bookload bench had parts): run the whole bench once first, or write elsewhere with --md")

// CheckMerge says whether a bench of some parts can merge into the file at
// path (it is missing, or has blocks), before anything is measured.
func CheckMerge(path string) error {
	old, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, b := range blocks(string(old)) {
		if b.kind != "" {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", path, errNoBlocks)
}

// Merge returns the BENCHMARKS.md of a bench that measured only the parts
// ran of plan order: fresh is what this bench rendered, old the file before.
// fresh's layout wins; its blocks take old's content as the kinds above say.
func Merge(old, fresh string, ran, order []string) (string, error) {
	prev := map[string]block{}
	for _, b := range blocks(old) {
		if b.kind != "" {
			prev[b.kind+" "+b.name] = b
		}
	}
	if len(prev) == 0 {
		return "", errNoBlocks
	}
	var out strings.Builder
	for _, b := range blocks(fresh) {
		p, had := prev[b.kind+" "+b.name]
		switch {
		case b.kind == "" || !had:
		case b.kind == "keep" || (b.kind == "part" && !slices.Contains(ran, b.name)):
			b.lines = p.lines
		case b.kind == "log":
			if len(logLines(p.lines)) > 0 {
				b.lines = append(slices.Clone(p.lines), logLines(b.lines)...)
			}
		case b.kind == "rows":
			b.lines = mergeRows(p.lines, b.lines, ran, order)
		}
		out.WriteString(b.String())
	}
	return out.String(), nil
}

// logLines are a log block's entries ("- " lines).
func logLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "- ") {
			out = append(out, l)
		}
	}
	return out
}

// mergeRows keeps fresh's table head and, part by part in plan order,
// fresh's rows for the parts that ran and old's for the others.
func mergeRows(old, fresh []string, ran, order []string) []string {
	_, oldRows, _ := tableRows(old)
	head, newRows, tail := tableRows(fresh)
	out := slices.Clone(head)
	for _, part := range order {
		if slices.Contains(ran, part) {
			out = append(out, newRows[part]...)
		} else {
			out = append(out, oldRows[part]...)
		}
	}
	return append(out, tail...)
}

// tableRows splits a rows block into the lines up to the table's delimiter
// row, the rows by their first cell, and the lines after the table.
func tableRows(lines []string) (head []string, byPart map[string][]string, tail []string) {
	byPart = map[string][]string{}
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "|---") {
		i++
	}
	i = min(i+1, len(lines))
	head = lines[:i]
	for ; i < len(lines) && strings.HasPrefix(lines[i], "| "); i++ {
		part := strings.TrimSpace(strings.SplitN(lines[i][1:], "|", 2)[0])
		byPart[part] = append(byPart[part], lines[i])
	}
	return head, byPart, lines[i:]
}

// WriteFile writes BENCHMARKS.md to path atomically: the whole file after a
// whole bench, else Merge with the file there; the cluster section of the
// file there is carried over either way.
func WriteFile(path string, o *Outcome, cfg Config) error {
	var fresh bytes.Buffer
	if err := Write(&fresh, o, cfg); err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	md := fresh.String()
	if cfg.Only != "" && old != nil {
		if md, err = Merge(string(old), md, o.Ran, names(o.Plan.Parts)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if kept := ClusterSection(old); kept != "" {
		md += "\n" + kept
	}
	return results.WriteFileAtomic(path, []byte(md))
}
