package runner

import (
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

func TestEngineNamed(t *testing.T) {
	httpT := loadtarget.Target{Name: "a", URL: "http://127.0.0.1:9081"}
	for name, want := range map[string]string{"": "fortio", "auto": "fortio", "fortio": "fortio", "k6": "k6"} {
		pick, err := EngineNamed(name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		e, err := pick(httpT)
		if err != nil || e.Name() != want {
			t.Errorf("--engine %q on http: %v %v, want %s", name, e, err, want)
		}
	}
	pick, _ := EngineNamed("k6")
	if _, err := pick(loadtarget.Target{Name: "c", URL: "fortio+http://127.0.0.1:8080"}); err == nil || !strings.Contains(err.Error(), "http and https") {
		t.Errorf("k6 on fortio+http: %v", err)
	}
	if _, err := EngineNamed("wrk"); err == nil {
		t.Error("unknown engine accepted")
	}
}
