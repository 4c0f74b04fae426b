package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

const scenariosDir = "../../../scenarios"

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(scenariosDir, "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON turns a YAML document into the JSON value a schema validator sees.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestShippedScenarios checks every scenarios/*.yaml against both the parser
// and the schema, and that each is named after its file.
func TestShippedScenarios(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(scenariosDir, "*.yaml"))
	names := map[string]bool{}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want {
			t.Errorf("%s: name %q, want the file name %q", f, s.Name, want)
		}
		names[s.Name] = true
		data, _ := os.ReadFile(f)
		if err := schema.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s does not match the schema: %v", f, err)
		}
	}
	for _, want := range []string{"details-100rps-10c", "details-100rps-10c-close", "bookinfo-1000rps-100c", "bookinfo-4000rps-400c", "bookinfo-ladder", "smoke"} {
		if !names[want] {
			t.Errorf("scenario %s is not shipped", want)
		}
	}
}

// TestSmokeIsShort keeps the scenario used by tests and the demo quick.
func TestSmokeIsShort(t *testing.T) {
	s, err := Load(filepath.Join(scenariosDir, "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var total time.Duration
	for _, p := range s.Profiles {
		total += s.Warmup.Std() + p.Duration.Std()*time.Duration(s.Repetitions)
	}
	if total > 10*time.Second {
		t.Errorf("smoke takes %v per target, want a few seconds", total)
	}
}

// TestSchemaAgreesWithParser feeds the schema the documents the parser rejects
// (those the schema can express) and the valid one; both must agree.
func TestSchemaAgreesWithParser(t *testing.T) {
	schema := compileSchema(t)
	if err := schema.Validate(asJSON(t, []byte(valid))); err != nil {
		t.Fatalf("schema rejects the valid document: %v", err)
	}
	if err := schema.Validate(asJSON(t, []byte(replace("keepalive: true", "keepalive: true\nuniform: true")))); err != nil {
		t.Errorf("schema rejects uniform: true: %v", err)
	}
	bad := map[string]string{
		"negative qps":        replace("qps: 100,", "qps: -5,"),
		"zero qps":            replace("qps: 200.5", "qps: 0"),
		"qps not a number":    replace("qps: 200.5", "qps: fast"),
		"unknown field":       replace("keepalive: true", "keepalive: true\nservcie: details"),
		"unknown profile key": replace("duration: 1m", "duration: 1m\n    rate: 5"),
		"bad duration":        replace("warmup: 5s", "warmup: 5 seconds"),
		"duration no unit":    replace("duration: 1m", "duration: 30"),
		"negative warmup":     replace("warmup: 5s", "warmup: -1s"),
		"zero repetitions":    replace("repetitions: 3", "repetitions: 0"),
		"float connections":   replace("connections: 20", "connections: 2.5"),
		"bad service":         replace("service: details", "service: detail"),
		"relative path":       replace("path: /details/0", "path: details/0"),
		"keepalive not bool":  replace("keepalive: true", "keepalive: yes please"),
		"uniform not bool":    replace("keepalive: true", "keepalive: true\nuniform: spread"),
		"missing name":        replace("name: details-100rps-10c\n", ""),
		"bad name":            replace("name: details-100rps-10c", "name: Details 100"),
		"missing profile key": replace("    connections: 20\n", ""),
		"bad header name":     replace("X-Test:", `"X Test":`),
		"empty warmup":        replace("warmup: 5s", "warmup:"),
	}
	for name, doc := range bad {
		if _, err := Parse("s.yaml", []byte(doc)); err == nil {
			t.Errorf("%s: parser accepts it", name)
		}
		if err := schema.Validate(asJSON(t, []byte(doc))); err == nil {
			t.Errorf("%s: schema accepts it", name)
		}
	}
}

// TestSchemaListsParserFields keeps the schema's field and service lists in
// step with the parser's.
func TestSchemaListsParserFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scenariosDir, "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]struct {
			Enum  []string `json:"enum"`
			Items struct {
				Properties map[string]any `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if got := sortedKeys(s.Properties); !slices.Equal(got, sorted(scenarioFields)) {
		t.Errorf("schema fields %v, parser fields %v", got, sorted(scenarioFields))
	}
	if got := sortedKeys(s.Properties["profiles"].Items.Properties); !slices.Equal(got, sorted(profileFields)) {
		t.Errorf("schema profile fields %v, parser fields %v", got, sorted(profileFields))
	}
	if got := s.Properties["service"].Enum; !slices.Equal(got, Services) {
		t.Errorf("schema services %v, scenario.Services %v", got, Services)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
