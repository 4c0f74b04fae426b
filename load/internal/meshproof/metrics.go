package meshproof

import (
	"fmt"
	"strconv"
	"strings"
)

// Sample is one line of a Prometheus (or OpenMetrics) text page.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// ParseMetrics reads a metrics page: Envoy's /stats/prometheus, ztunnel's
// and istiod's /metrics. Comments (# HELP, # TYPE, # EOF) are skipped; a
// line that is not a sample is an error naming its line number.
func ParseMetrics(text []byte) ([]Sample, error) {
	var out []Sample
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d %q: %w", i+1, truncate(line, 120), err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name, line = line[:end], line[end:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " ,")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, `="`)
			if eq <= 0 {
				return s, fmt.Errorf("bad label")
			}
			key := line[:eq]
			line = line[eq+2:]
			var v strings.Builder
			closed := false
			for j := 0; j < len(line); j++ {
				c := line[j]
				switch {
				case c == '\\' && j+1 < len(line):
					j++
					switch line[j] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(line[j])
					}
				case c == '"':
					line, closed = line[j+1:], true
				default:
					v.WriteByte(c)
				}
				if closed {
					break
				}
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value")
			}
			s.Labels[key] = v.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("value %q: %w", fields[0], err)
	}
	s.Value = v
	return s, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Sum adds the samples named name whose labels all pass keep (nil: all).
func Sum(samples []Sample, name string, keep func(map[string]string) bool) float64 {
	var t float64
	for _, s := range samples {
		if s.Name == name && (keep == nil || keep(s.Labels)) {
			t += s.Value
		}
	}
	return t
}
