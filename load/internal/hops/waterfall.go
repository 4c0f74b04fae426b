package hops

import (
	"slices"
	"strings"
)

// A waterfall lays a Split out along the call tree. The header gives
// durations, not start times, and a server's upstream calls may overlap
// (productpage calls details and reviews at once), so the stack follows one
// path from the client to a leaf, the critical path: at each server, the call
// it waited for longest. Along it the parts add up to the requests' mean
// latency:
//
//	client → root       latency - app            (hop: network, kernel, mesh)
//	root                app - the critical call   (own time)
//	root → X            X - X.app                 (hop)
//	X                   X.app - X's critical call (own time)
//	...
//
// because each part is a difference of means and the means of a sum are the
// sums of the means. A call off the path (details beside reviews) is a
// parallel branch: its hop and server time, drawn from where its sibling on
// the path starts (the services start their calls together), not added to
// the stack. When such a call lasted longer than its sibling in some of the
// requests, the excess is in the server's own time.

// Segment kinds.
const (
	KindHop    = "hop"    // a residual: network, kernel and any mesh
	KindServer = "server" // a service's own time
)

// Segment is one part of a waterfall.
type Segment struct {
	// Key names the part across targets and repetitions: "hop:client",
	// "hop:<wait>" (e.g. hop:reviews.ratings), "server:app",
	// "server:<wait>" (the server that call reached).
	Key   string  `json:"key"`
	Label string  `json:"label"` // "reviews → ratings", "ratings"
	Kind  string  `json:"kind"`  // KindHop or KindServer
	MS    float64 `json:"ms"`
	// StartMS is where the part starts, from the client's send, as laid
	// out (see above); Parallel marks a part off the critical path.
	StartMS  float64 `json:"start_ms"`
	Parallel bool    `json:"parallel,omitempty"`
}

// CriticalPath returns the calls (wait metric names) the stack follows in
// split s: from the root, at each server the call with the longest mean
// wait, ties to the first name.
func CriticalPath(s Split) []string {
	var path []string
	server := "app"
	for {
		next, best := "", -1.0
		for _, w := range children(s, server) {
			if s.MS[w] > best {
				next, best = w, s.MS[w]
			}
		}
		if next == "" {
			return path
		}
		path = append(path, next)
		server = next + ".app"
	}
}

// children are the calls made by the server whose time is metric server
// ("app", or "<wait>.app"), sorted by name.
func children(s Split, server string) []string {
	prefix := strings.TrimSuffix(strings.TrimSuffix(server, "app"), ".")
	var out []string
	for name := range s.MS {
		if strings.HasPrefix(name, ResidualColumn) || !IsWait(name) {
			continue
		}
		parent, _ := cutLast(name)
		if parent == prefix {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// cutLast splits "reviews.ratings" into "reviews" and "ratings"; "details"
// into "" and "details".
func cutLast(name string) (string, string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// Stack lays split s out along path (CriticalPath of a reference split, so
// that every target and repetition compared is laid out the same way); root
// names the service the client called. The critical path comes first, in
// order from the client, then each parallel branch.
func Stack(s Split, root string, path []string) []Segment {
	if root == "" {
		root = "server"
	}
	var out []Segment
	at := 0.0
	add := func(seg Segment) {
		seg.StartMS = at
		at += seg.MS
		out = append(out, seg)
	}
	add(Segment{Key: "hop:" + ClientHop, Label: "client → " + root, Kind: KindHop, MS: s.MS[ResidualColumn+ClientHop]})
	type branch struct {
		wait, caller string
		start        float64
	}
	var parallel []branch
	server, name := "app", root
	for depth := 0; ; depth++ {
		var next string
		if depth < len(path) && slices.Contains(children(s, server), path[depth]) {
			next = path[depth]
		}
		own := s.MS[server]
		if next != "" {
			own -= s.MS[next]
		}
		key := "server:app"
		if server != "app" {
			key = "server:" + strings.TrimSuffix(server, ".app")
		}
		ownStart := at
		add(Segment{Key: key, Label: name, Kind: KindServer, MS: own})
		for _, w := range children(s, server) {
			switch {
			case w == next:
			case next == "": // no call on the path here: beside the whole server time
				parallel = append(parallel, branch{w, name, ownStart})
			default:
				parallel = append(parallel, branch{w, name, at})
			}
		}
		if next == "" {
			break
		}
		_, callee := cutLast(next)
		add(Segment{Key: "hop:" + next, Label: name + " → " + callee, Kind: KindHop, MS: s.MS[ResidualColumn+next]})
		server, name = next+".app", callee
	}
	// A parallel branch: the call's hop and its server's whole time (what it
	// called in turn is inside it).
	for _, b := range parallel {
		_, callee := cutLast(b.wait)
		hop := Segment{Key: "hop:" + b.wait, Label: b.caller + " → " + callee, Kind: KindHop,
			MS: s.MS[ResidualColumn+b.wait], StartMS: b.start, Parallel: true}
		srv := Segment{Key: "server:" + b.wait, Label: callee, Kind: KindServer,
			MS: s.MS[b.wait+".app"], StartMS: b.start + hop.MS, Parallel: true}
		out = append(out, hop, srv)
	}
	return out
}

// StackTotal is the sum of the critical path's parts: the mean end-to-end
// latency of the split's requests.
func StackTotal(segs []Segment) float64 {
	var t float64
	for _, s := range segs {
		if !s.Parallel {
			t += s.MS
		}
	}
	return t
}
