package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// The app-behaviour × mesh matrix: targets named MODE.SETTING (no-mesh.nodelay,
// no-mesh.nagle, ambient.nodelay, ambient.nagle) are the cells of a grid of
// modes × settings of one knob. The baseline target (--baseline) names the
// reference mode and setting. For every other mode M and setting S with all
// four cells present, the interaction is
//
//	(S - reference setting under M) - (S - reference setting under the reference mode)
//
// per repetition, the four cells paired as the differences are (the same
// repetition of the same run), with a Student-t interval (stats.NewInteraction):
// does the mesh change what the knob does?

// InteractionMethod says how Interactions are computed, for readers of the JSON.
const InteractionMethod = "targets named MODE.SETTING form a matrix; per (scenario, profile), mode M and setting S: " +
	"mean over paired repetitions of (S - baseline setting under M) - (S - baseline setting under the baseline mode), " +
	"plain latency, Student-t interval at 1-alpha (not corrected across lines)"

// Interaction is one (mode, setting) cell's difference of differences.
type Interaction struct {
	Scenario string `json:"scenario"`
	Profile  string `json:"profile"`
	Mode     string `json:"mode"`
	Setting  string `json:"setting"`
	// BaseMode and BaseSetting are the baseline target's parts.
	BaseMode    string `json:"base_mode"`
	BaseSetting string `json:"base_setting"`
	// Metrics: each latency metric's interaction (EffectUnderMS is the
	// setting's mean effect under Mode, EffectWithoutMS under BaseMode).
	Metrics map[string]InteractionMetric `json:"metrics"`
}

// InteractionMetric is one metric of an Interaction.
type InteractionMetric struct {
	Pairs           int         `json:"pairs"`
	MeanMS          float64     `json:"mean_ms"`
	SDMS            float64     `json:"sd_ms"`
	CIMS            *[2]float64 `json:"ci_ms"`
	Confidence      float64     `json:"confidence"`
	EffectUnderMS   float64     `json:"effect_under_mode_ms"`
	EffectWithoutMS float64     `json:"effect_under_base_mode_ms"`
	Line            string      `json:"line"`
}

// InteractionLineMetrics are the metrics whose lines the Markdown shows.
var InteractionLineMetrics = []string{"p50", "p99"}

// splitCell is a target name's mode and setting; ok is false for a name
// that is not MODE.SETTING.
func splitCell(target string) (mode, setting string, ok bool) {
	mode, setting, ok = strings.Cut(target, ".")
	return mode, setting, ok && mode != "" && setting != ""
}

// interactions fills t.Interactions from the rows.
func (t *Table) interactions() {
	baseMode, baseSetting, ok := splitCell(t.Baseline)
	if !ok {
		return
	}
	type sp struct{ scenario, profile string }
	var order []sp
	cells := map[sp]map[[2]string]bool{}
	for _, r := range t.Rows {
		mode, setting, ok := splitCell(r.Target)
		if !ok {
			continue
		}
		k := sp{r.Scenario, r.Profile}
		if cells[k] == nil {
			cells[k] = map[[2]string]bool{}
			order = append(order, k)
		}
		cells[k][[2]string{mode, setting}] = true
	}
	for _, k := range order {
		var modes, settings []string
		for _, r := range t.Rows {
			if mode, setting, ok := splitCell(r.Target); ok && r.Scenario == k.scenario && r.Profile == k.profile {
				if !slices.Contains(modes, mode) {
					modes = append(modes, mode)
				}
				if !slices.Contains(settings, setting) {
					settings = append(settings, setting)
				}
			}
		}
		have := cells[k]
		for _, m := range modes {
			for _, s := range settings {
				if m == baseMode || s == baseSetting || !have[[2]string{m, s}] || !have[[2]string{m, baseSetting}] ||
					!have[[2]string{baseMode, s}] || !have[[2]string{baseMode, baseSetting}] {
					continue
				}
				key := func(mode, setting string) rowKey { return rowKey{k.scenario, k.profile, mode + "." + setting} }
				t.Interactions = append(t.Interactions, t.interaction(
					key(m, s), key(m, baseSetting), key(baseMode, s), key(baseMode, baseSetting)))
			}
		}
	}
}

// interaction computes one cell from its four rows.
func (t *Table) interaction(knobUnder, baseUnder, knobWithout, baseWithout rowKey) Interaction {
	mode, setting, _ := splitCell(knobUnder.target)
	bMode, bSetting, _ := splitCell(baseWithout.target)
	in := Interaction{Scenario: knobUnder.scenario, Profile: knobUnder.profile, Mode: mode, Setting: setting,
		BaseMode: bMode, BaseSetting: bSetting, Metrics: map[string]InteractionMetric{}}
	keys := []rowKey{knobUnder, baseUnder, knobWithout, baseWithout}
	sets := t.pairAll(keys)
	for _, m := range Metrics {
		cols := make([][]float64, len(keys))
		for _, set := range sets {
			for c, k := range keys {
				v, _ := plainOf(t.reps[k][set[c]]).Metric(m)
				cols[c] = append(cols[c], v)
			}
		}
		p, err := stats.NewInteraction(cols[0], cols[1], cols[2], cols[3])
		if err != nil {
			continue // cannot happen: pairAll gives one index per cell
		}
		im := InteractionMetric{Pairs: p.N, MeanMS: p.Mean, SDMS: p.SD, Confidence: 1 - t.Alpha,
			EffectUnderMS:   stats.NewPaired(sub(cols[0], cols[1])).Mean,
			EffectWithoutMS: stats.NewPaired(sub(cols[2], cols[3])).Mean}
		if lo, hi, ok := p.Interval(im.Confidence); ok {
			im.CIMS = &[2]float64{lo, hi}
		}
		im.Line = interactionLine(in, m, im)
		in.Metrics[m] = im
	}
	return in
}

func sub(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// pairAll matches the repetitions of several rows as pairs does for two:
// the same repetition of the same run in every row, else by position.
func (t *Table) pairAll(keys []rowKey) [][]int {
	type id struct {
		run string
		rep int
	}
	index := make([]map[id]int, len(keys))
	for c, k := range keys {
		index[c] = map[id]int{}
		for i, r := range t.reps[k] {
			index[c][id{t.repRuns[k][i], r.Repetition}] = i
		}
	}
	var out [][]int
	for i, r := range t.reps[keys[0]] {
		at := id{t.repRuns[keys[0]][i], r.Repetition}
		set := []int{i}
		for c := 1; c < len(keys); c++ {
			j, ok := index[c][at]
			if !ok {
				break
			}
			set = append(set, j)
		}
		if len(set) == len(keys) {
			out = append(out, set)
		}
	}
	if len(out) > 0 {
		return out
	}
	n := len(t.reps[keys[0]])
	for _, k := range keys[1:] {
		n = min(n, len(t.reps[k]))
	}
	for i := range n {
		set := make([]int, len(keys))
		for c := range set {
			set[c] = i
		}
		out = append(out, set)
	}
	return out
}

// interactionLine is the sentence a person pastes:
//
//	nagle x ambient vs nodelay x no-mesh, matrix-details 100rps-10c: p99 interaction +0.100 ms [-0.200, 0.400] (nagle: +3.100 ms under ambient, +3.000 ms under no-mesh)
func interactionLine(in Interaction, metric string, im InteractionMetric) string {
	s := fmt.Sprintf("%s x %s vs %s x %s, %s %s: %s interaction %s ms", in.Setting, in.Mode, in.BaseSetting, in.BaseMode,
		in.Scenario, in.Profile, metric, Signed(FormatMS(im.MeanMS)))
	if im.CIMS != nil {
		s += fmt.Sprintf(" [%s, %s]", FormatMS(im.CIMS[0]), FormatMS(im.CIMS[1]))
	} else {
		s += fmt.Sprintf(" (%d repetition: no interval; run at least 3)", im.Pairs)
	}
	return s + fmt.Sprintf(" (%s: %s ms under %s, %s ms under %s)", in.Setting,
		Signed(FormatMS(im.EffectUnderMS)), in.Mode, Signed(FormatMS(im.EffectWithoutMS)), in.BaseMode)
}
