package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const valid = `name: details-100rps-10c
description: test
service: details
path: /details/0
warmup: 5s
repetitions: 3
timeout: 2s
profiles:
  - {name: 100rps-10c, qps: 100, connections: 10, duration: 30s}
  - name: 200rps-20c
    qps: 200.5
    connections: 20
    duration: 1m
headers: {X-Test: "yes", Accept: application/json}
keepalive: true
`

func TestParseValid(t *testing.T) {
	s, err := Parse("scenarios/x.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	want := Scenario{
		Name: "details-100rps-10c", Description: "test", Service: "details", Path: "/details/0",
		Warmup: Duration(5 * time.Second), Repetitions: 3, Timeout: Duration(2 * time.Second), KeepAlive: true,
		Headers: []Header{{"X-Test", "yes"}, {"Accept", "application/json"}},
		Profiles: []Profile{
			{Name: "100rps-10c", QPS: 100, Connections: 10, Duration: Duration(30 * time.Second)},
			{Name: "200rps-20c", QPS: 200.5, Connections: 20, Duration: Duration(time.Minute)},
		},
	}
	if got := *s; !equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func equal(a, b Scenario) bool {
	if len(a.Headers) != len(b.Headers) || len(a.Profiles) != len(b.Profiles) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i] != b.Headers[i] {
			return false
		}
	}
	for i := range a.Profiles {
		if a.Profiles[i] != b.Profiles[i] {
			return false
		}
	}
	a.Headers, b.Headers, a.Profiles, b.Profiles = nil, nil, nil, nil
	return a.Name == b.Name && a.Description == b.Description && a.Service == b.Service && a.Path == b.Path &&
		a.Warmup == b.Warmup && a.Repetitions == b.Repetitions && a.Timeout == b.Timeout && a.KeepAlive == b.KeepAlive
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse("f.yaml", []byte("name: a\nservice: ratings\npath: /ratings/0\nprofiles: [{name: p, qps: 10, connections: 1, duration: 1s}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Repetitions != DefaultRepetitions || s.Timeout.Std() != DefaultTimeout || !s.KeepAlive || s.Warmup != 0 || len(s.Headers) != 0 || s.Uniform {
		t.Errorf("defaults not applied: %+v", s)
	}
}

func TestParseUniform(t *testing.T) {
	s, err := Parse("f.yaml", []byte(replace("keepalive: true", "keepalive: true\nuniform: true")))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Uniform {
		t.Error("uniform: true not read")
	}
}

// replace swaps one line of the valid document, so that each case names the
// line its error must point at.
func replace(old, new string) string {
	if !strings.Contains(valid, old) {
		panic("no " + old)
	}
	return strings.Replace(valid, old, new, 1)
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // each a full "file:line: field: message" or a prefix of it
	}{
		{"negative qps", replace("qps: 100,", "qps: -5,"), []string{"s.yaml:9: profiles[0].qps: must be > 0, got -5"}},
		{"zero qps", replace("qps: 200.5", "qps: 0"), []string{"s.yaml:11: profiles[1].qps: must be > 0, got 0"}},
		{"qps not a number", replace("qps: 200.5", "qps: fast"), []string{`s.yaml:11: profiles[1].qps: must be a number, got "fast"`}},
		{"unknown field", replace("keepalive: true", "keepalive: true\nservcie: details"), []string{"s.yaml:16: servcie: unknown field (known fields: name, description"}},
		{"unknown profile field", replace("duration: 1m", "duration: 1m\n    rate: 5"), []string{"s.yaml:14: profiles[1].rate: unknown field"}},
		{"bad duration", replace("warmup: 5s", "warmup: 5 seconds"), []string{`s.yaml:5: warmup: must be a duration such as 500ms, 30s or 2m, got "5 seconds"`}},
		{"duration without unit", replace("duration: 1m", "duration: 30"), []string{"s.yaml:13: profiles[1].duration: must be a duration with a unit such as 30s, got 30"}},
		{"negative warmup", replace("warmup: 5s", "warmup: -1s"), []string{"s.yaml:5: warmup: must not be negative, got -1s"}},
		{"zero duration", replace("duration: 1m", "duration: 0s"), []string{"s.yaml:13: profiles[1].duration: must be > 0, got 0s"}},
		{"zero repetitions", replace("repetitions: 3", "repetitions: 0"), []string{"s.yaml:6: repetitions: must be >= 1, got 0"}},
		{"fractional connections", replace("connections: 20", "connections: 2.5"), []string{`s.yaml:12: profiles[1].connections: must be an integer, got "2.5"`}},
		{"bad service", replace("service: details", "service: detail"), []string{`s.yaml:3: service: must be one of productpage, details, reviews, ratings, echo, got "detail"`}},
		{"negative payload", replace("keepalive: true", "keepalive: true\npayload: -1"), []string{"s.yaml:16: payload: must be >= 0, got -1"}},
		{"payload over fortio's limit", replace("keepalive: true", "keepalive: true\npayload: 300000"), []string{"s.yaml:16: payload: must be at most 262144 bytes (fortio's payload limit), got 300000"}},
		{"h2 not a boolean", replace("keepalive: true", "keepalive: true\nh2: yes please"), []string{`s.yaml:16: h2: must be true or false, got "yes please"`}},
		{"relative path", replace("path: /details/0", "path: details/0"), []string{`s.yaml:4: path: must start with /, got "details/0"`}},
		{"keepalive not bool", replace("keepalive: true", "keepalive: yes please"), []string{`s.yaml:15: keepalive: must be true or false, got "yes please"`}},
		{"uniform not bool", replace("keepalive: true", "keepalive: true\nuniform: spread"), []string{`s.yaml:16: uniform: must be true or false, got "spread"`}},
		{"missing name", replace("name: details-100rps-10c\n", ""), []string{"s.yaml:1: name: required field missing"}},
		{"bad name", replace("name: details-100rps-10c", "name: Details 100"), []string{`s.yaml:1: name: must be lowercase letters, digits and dashes`}},
		{"duplicate key", replace("path: /details/0", "path: /details/0\npath: /details/1"), []string{"s.yaml:5: path: defined twice (first at line 4)"}},
		{"duplicate profile", replace("name: 200rps-20c", "name: 100rps-10c"), []string{`s.yaml:10: profiles[1].name: profile "100rps-10c" defined twice (first at line 9)`}},
		{"profile missing field", replace("    connections: 20\n", ""), []string{"s.yaml:10: profiles[1].connections: required field missing"}},
		{"too few requests per connection", replace("qps: 100, connections: 10, duration: 30s", "qps: 10, connections: 10, duration: 1s"),
			[]string{"s.yaml:9: profiles[0]: qps × duration gives 10 requests, fewer than 2 per connection (10 connections)"}},
		{"empty profiles", replace("profiles:\n  - {name: 100rps-10c, qps: 100, connections: 10, duration: 30s}\n  - name: 200rps-20c\n    qps: 200.5\n    connections: 20\n    duration: 1m\n", "profiles: []\n"),
			[]string{"s.yaml:8: profiles: must list at least one profile"}},
		{"profiles not a list", replace("profiles:\n  - {name: 100rps-10c, qps: 100, connections: 10, duration: 30s}\n  - name: 200rps-20c\n    qps: 200.5\n    connections: 20\n    duration: 1m\n", "profiles: {name: a}\n"),
			[]string{"s.yaml:8: profiles: must be a list of profiles, got a mapping"}},
		{"bad header name", replace("X-Test:", `"X Test":`), []string{`s.yaml:14: headers.X Test: not a valid header name`}},
		{"connection header without keepalive", strings.Replace(replace("keepalive: true", "keepalive: false"), "X-Test", "Connection", 1),
			[]string{"s.yaml:14: headers.Connection: keepalive: false already sends Connection: close"}},
		{"empty value", replace("warmup: 5s", "warmup:"), []string{"s.yaml:5: warmup: must be a duration such as 30s, got nothing"}},
		{"yaml parser error", replace("path: /details/0", "path: [/details/0"), []string{"s.yaml:4: invalid YAML: did not find expected ',' or ']'"}},
		{"yaml scanner error", replace("path: /details/0", "path: a: b"), []string{"s.yaml:4: invalid YAML: mapping values are not allowed in this context"}},
		{"two documents", valid + "---\nname: b\n", []string{"s.yaml:17: more than one YAML document"}},
		{"not a mapping", "- a\n- b\n", []string{"s.yaml:1: must be a mapping, got a list"}},
		{"empty file", "", []string{"s.yaml: empty file"}},
		{"several errors at once", strings.Replace(replace("qps: 100,", "qps: -5,"), "repetitions: 3", "repetitions: -1", 1),
			[]string{"s.yaml:6: repetitions: must be >= 1, got -1", "s.yaml:9: profiles[0].qps: must be > 0, got -5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatalf("no error, parsed %+v", s)
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(errs[i].Error(), w) {
					t.Errorf("error %d:\n got %q\nwant %q...", i, errs[i].Error(), w)
				}
			}
		})
	}
}
