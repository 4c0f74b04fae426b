package loadtarget

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in, name, url, err string
	}{
		{in: "tuned=http://127.0.0.1:9080/", name: "tuned", url: "http://127.0.0.1:9080"},
		{in: "ambient=http://productpage.ambient:9080", name: "ambient", url: "http://productpage.ambient:9080"},
		{in: "mesh=fortio+http://fortio.sidecar:8080", name: "mesh", url: "fortio+http://fortio.sidecar:8080"},
		{in: "amb=fortio+http://127.0.0.1:8080?url=http://details:9080", name: "amb", url: "fortio+http://127.0.0.1:8080?url=http://details:9080"},
		{in: "http://127.0.0.1:9080", err: "want NAME=BASEURL"},
		{in: "a/b=http://x", err: "target name"},
		{in: "x=127.0.0.1:9080", err: "needs a scheme and a host"},
		{in: "x=http://h?q=1", err: "query"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.Name != c.name || got.URL != c.url {
			t.Errorf("Parse(%q) = %+v, %v", c.in, got, err)
		}
	}
}

func TestLocal(t *testing.T) {
	for service, url := range map[string]string{
		"productpage": "http://127.0.0.1:9080", "details": "http://127.0.0.1:9081",
		"reviews": "http://127.0.0.1:9082", "ratings": "http://127.0.0.1:9083",
	} {
		got, err := Local(service)
		if err != nil || got.URL != url || got.Name != "local" {
			t.Errorf("Local(%s) = %+v, %v; want %s", service, got, err, url)
		}
	}
	if got := (Target{URL: "http://h:1/"}).RequestURL("/details/0"); got != "http://h:1/details/0" {
		t.Errorf("RequestURL = %s", got)
	}
	if err := CheckUnique([]Target{{Name: "a"}, {Name: "a"}}); err == nil {
		t.Error("duplicate names accepted")
	}
}
