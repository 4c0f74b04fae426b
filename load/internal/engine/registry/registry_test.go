package registry

import (
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

func TestByScheme(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:9081", "fortio"},
		{"https://h", "fortio"},
		{"fortio+http://h:8080", "fortio-rest"},
		{"bookload+https://h:8080", "bookload-agent"},
	} {
		e, err := ByScheme(loadtarget.Target{Name: "a", URL: c.url})
		if err != nil || e.Name() != c.want {
			t.Errorf("%s: %v %v, want %s", c.url, e, err, c.want)
		}
	}
	if _, err := ByScheme(loadtarget.Target{Name: "a", URL: "fortio+http://h:8080?qps=1"}); err == nil {
		t.Error("fortio+http with an unknown query parameter accepted")
	}
	// The error lists every scheme the registry serves.
	_, err := ByScheme(loadtarget.Target{Name: "a", URL: "grpc://h:8080"})
	if err == nil {
		t.Fatal("grpc has no engine, want an error")
	}
	for _, e := range Engines {
		for _, s := range e.Schemes {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not name scheme %s", err, s)
			}
		}
	}
}

func TestNamed(t *testing.T) {
	httpT := loadtarget.Target{Name: "a", URL: "http://127.0.0.1:9081"}
	for name, want := range map[string]string{"": "fortio", "auto": "fortio", "fortio": "fortio", "k6": "k6"} {
		pick, err := Named(name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		e, err := pick(httpT)
		if err != nil || e.Name() != want {
			t.Errorf("--engine %q on http: %v %v, want %s", name, e, err, want)
		}
	}
	pick, _ := Named("k6")
	if _, err := pick(loadtarget.Target{Name: "c", URL: "fortio+http://127.0.0.1:8080"}); err == nil || !strings.Contains(err.Error(), "http and https") {
		t.Errorf("k6 on fortio+http: %v", err)
	}
	// Remote engines are reached by their schemes, not named.
	for _, name := range []string{"wrk", "fortio-rest", "bookload-agent"} {
		if _, err := Named(name); err == nil || !strings.Contains(err.Error(), "known: auto, fortio, k6") {
			t.Errorf("--engine %s: %v, want unknown with the known list", name, err)
		}
	}
}

func TestFlagHelpNamesEveryEngine(t *testing.T) {
	h := FlagHelp()
	for _, e := range Engines {
		if !strings.Contains(h, e.Help) {
			t.Errorf("help %q lacks %s's %q", h, e.Name, e.Help)
		}
	}
	for _, n := range Names() {
		if !strings.Contains(h, n) {
			t.Errorf("help %q lacks %s", h, n)
		}
	}
}
