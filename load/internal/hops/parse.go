package hops

import (
	"bytes"
	"strconv"
	"time"
)

// Metric is one Server-Timing entry that carries a duration.
type Metric struct {
	Name string
	Dur  time.Duration
}

var headerName = []byte("server-timing:")

// FromResponse appends to dst the metrics of every Server-Timing field in the
// head of raw, a whole HTTP/1.x response as read off the wire (what fortio's
// fast client hands its DataWriter). Entries without a dur are skipped.
func FromResponse(dst []Metric, raw []byte) []Metric {
	head := raw
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		head = raw[:i]
	}
	for len(head) > 0 {
		line := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			line, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		if len(line) > len(headerName) && bytes.EqualFold(line[:len(headerName)], headerName) {
			dst = Parse(dst, line[len(headerName):])
		}
	}
	return dst
}

// Parse appends to dst the metrics with a dur in one Server-Timing field
// value (W3C Server Timing: name *( ";" param ), comma separated). A
// quoted desc holding a comma or semicolon is not supported: the services
// send none.
func Parse(dst []Metric, value []byte) []Metric {
	for _, entry := range bytes.Split(value, []byte(",")) {
		params := bytes.Split(entry, []byte(";"))
		name := string(bytes.TrimSpace(params[0]))
		if name == "" {
			continue
		}
		for _, p := range params[1:] {
			k, v, ok := bytes.Cut(p, []byte("="))
			if !ok || !bytes.EqualFold(bytes.TrimSpace(k), []byte("dur")) {
				continue
			}
			ms, err := strconv.ParseFloat(string(bytes.Trim(bytes.TrimSpace(v), `"`)), 64)
			if err != nil || ms < 0 {
				break
			}
			dst = append(dst, Metric{Name: name, Dur: time.Duration(ms * float64(time.Millisecond))})
			break
		}
	}
	return dst
}
