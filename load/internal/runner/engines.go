package runner

import (
	"fmt"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/k6engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// EngineNames are the values of `bookload run --engine`.
var EngineNames = []string{"auto", fortioengine.Name, k6engine.Name}

// EngineNamed returns the Config.EngineFor of `--engine NAME`: "auto" (or "")
// picks by URL scheme (DefaultEngine); "fortio" and "k6" drive every http(s)
// target with that engine.
func EngineNamed(name string) (func(loadtarget.Target) (engine.Engine, error), error) {
	var mk func() engine.Engine
	switch name {
	case "", "auto":
		return DefaultEngine, nil
	case fortioengine.Name:
		mk = func() engine.Engine { return &fortioengine.Engine{} }
	case k6engine.Name:
		mk = func() engine.Engine { return &k6engine.Engine{} }
	default:
		return nil, fmt.Errorf("unknown engine %q (want auto, fortio or k6)", name)
	}
	return func(t loadtarget.Target) (engine.Engine, error) {
		switch t.Scheme() {
		case "http", "https":
			return mk(), nil
		}
		return nil, fmt.Errorf("target %s: the %s engine drives http and https URLs, not %q", t.Name, name, t.Scheme())
	}, nil
}
