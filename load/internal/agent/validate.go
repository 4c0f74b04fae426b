package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"

	"fortio.org/fortio/fhttp"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"golang.org/x/net/http/httpguts"
)

// fieldError is a request problem that a 400 reports.
type fieldError struct {
	field, msg string
}

func (e *fieldError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

func bad(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// decode reads a RunRequest strictly: unknown fields and trailing data are
// errors, and a value of the wrong type is named by its path.
func decode(r io.Reader) (*agentwire.RunRequest, *fieldError) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var req agentwire.RunRequest
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return nil, bad(te.Field, "cannot use %s here (want %s)", te.Value, typeName(te))
		case errors.As(err, &se):
			return nil, bad("", "body is not JSON: %v (at byte %d)", err, se.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, bad("", "body is not JSON: it ends in the middle of a value")
		case errors.Is(err, io.EOF):
			return nil, bad("", "empty body: want a JSON RunRequest {scenario, profile, target, repetition}")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, bad(name, "unknown field")
		}
		return nil, bad("", "body: %v", err)
	}
	if dec.More() {
		return nil, bad("", "body: data after the JSON object")
	}
	return &req, nil
}

func typeName(te *json.UnmarshalTypeError) string {
	switch t := te.Type.String(); {
	case strings.HasSuffix(t, "Duration"):
		return "a duration string such as \"30s\""
	default:
		return t
	}
}

// validate checks req against what `bookload run` would accept from a
// scenario file and against the agent's limits.
func validate(req *agentwire.RunRequest, lim agentwire.Limits) *fieldError {
	s := req.Scenario
	if s == nil {
		return bad("scenario", "required")
	}
	if s.Name == "" {
		return bad("scenario.name", "required")
	}
	if !strings.HasPrefix(s.Path, "/") {
		return bad("scenario.path", "must start with /, got %q", s.Path)
	}
	if s.Timeout <= 0 {
		return bad("scenario.timeout", "must be > 0, got %s", s.Timeout)
	}
	if s.Timeout.Std() > time.Minute {
		return bad("scenario.timeout", "must be at most 1m, got %s", s.Timeout)
	}
	probe := &fhttp.HTTPOptions{}
	for i, h := range s.Headers {
		if !httpguts.ValidHeaderFieldName(h.Name) || !httpguts.ValidHeaderFieldValue(h.Value) {
			return bad(fmt.Sprintf("scenario.headers[%d]", i), "not a valid header: %q: %q", h.Name, h.Value)
		}
		if err := probe.AddAndValidateExtraHeader(h.Name + ": " + h.Value); err != nil {
			return bad(fmt.Sprintf("scenario.headers[%d]", i), "%v", err)
		}
		if !s.KeepAlive && strings.EqualFold(h.Name, "connection") {
			return bad(fmt.Sprintf("scenario.headers[%d]", i), "keepalive: false already sends Connection: close")
		}
	}

	p := req.Profile
	switch {
	case p.Name == "":
		return bad("profile.name", "required")
	case math.IsNaN(p.QPS) || math.IsInf(p.QPS, 0) || p.QPS <= 0:
		return bad("profile.qps", "must be > 0, got %v", p.QPS)
	case p.QPS > lim.MaxQPS:
		return bad("profile.qps", "%v is over this agent's limit of %v (bookload agent --max-qps)", p.QPS, lim.MaxQPS)
	case p.Connections < 1:
		return bad("profile.connections", "must be >= 1, got %d", p.Connections)
	case p.Connections > lim.MaxConnections:
		return bad("profile.connections", "%d is over this agent's limit of %d (bookload agent --max-connections)", p.Connections, lim.MaxConnections)
	case p.Duration <= 0:
		return bad("profile.duration", "must be > 0, got %s", p.Duration)
	case p.Duration > lim.MaxDuration:
		return bad("profile.duration", "%s is over this agent's limit of %s (bookload agent --max-duration)", p.Duration, lim.MaxDuration)
	}
	// The scenario parser's rule (fortio lowers the connection count silently
	// otherwise); warmups run whatever the warmup duration gives, as locally.
	if calls := int64(p.QPS * p.Duration.Std().Seconds()); req.Repetition > 0 && calls < 2*int64(p.Connections) {
		return bad("profile", "qps × duration gives %d requests, fewer than 2 per connection (%d connections)", calls, p.Connections)
	}

	if req.Repetition < 0 {
		return bad("repetition", "must be >= 0 (0 is a warmup), got %d", req.Repetition)
	}
	if err := req.Target.Validate(); err != nil {
		field := "target.url"
		if !strings.Contains(err.Error(), "URL") {
			field = "target.name"
		}
		return bad(field, "%v", err)
	}
	u, _ := url.Parse(req.Target.URL)
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("target.url", "must be an http or https base URL as the agent reaches it (e.g. http://productpage:9080), got %q", req.Target.URL)
	}
	return nil
}
