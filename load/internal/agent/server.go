package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/rapi"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// maxBody bounds a request body; a RunRequest is a few kB.
const maxBody = 1 << 20

// Server is the bookload part of the agent: the /bookload/v1/ endpoints and
// the guard that keeps bookload's runs and fortio's REST runs from
// overlapping. One run at a time: a second gets 409, never a queue, because
// two load runs in one pod would measure each other.
type Server struct {
	Limits agentwire.Limits
	// Log receives one line per run and per refused request; nil discards.
	Log *log.Logger
	// Standalone serves bookload's endpoints without fortio's REST API next
	// to them: runs are not listed in fortio's (process-wide) REST status,
	// and fortio's runs are not waited for. For tests and benchmarks that
	// host many agents in one process, where that shared status would make
	// each agent see the others' runs as its own.
	Standalone bool

	running sync.Mutex // held for the whole of a run
	mu      sync.Mutex // guards current
	current *agentwire.RunInfo
}

// NewServer returns a server with the given limits.
func NewServer(lim agentwire.Limits, logger *log.Logger) *Server {
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	return &Server{Limits: lim, Log: logger}
}

// Handler serves the /bookload/v1/ endpoints and passes everything else to
// fortio (the proxy to fortio's own server, see StartFortio). fortio's
// rest/run under uiPath is refused with 409 while a bookload run is going.
func (s *Server) Handler(fortio http.Handler, uiPath string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(agentwire.StatusPath, s.status)
	mux.HandleFunc(agentwire.CheckPath, s.check)
	mux.HandleFunc(agentwire.RunPath, s.run)
	mux.HandleFunc(agentwire.PathPrefix, func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusNotFound, agentwire.ErrorReply{Error: fmt.Sprintf("no endpoint %s (have %s, %s, %s)", r.URL.Path, agentwire.StatusPath, agentwire.CheckPath, agentwire.RunPath)})
	})
	mux.HandleFunc(uiPath+rapi.RestRunURI, func(w http.ResponseWriter, r *http.Request) {
		if info := s.info(); info != nil {
			// fortio's own error shape, so fortio's REST clients read it.
			reply(w, http.StatusConflict, map[string]any{"error": true, "message": "bookload agent busy running " + describe(info)})
			return
		}
		fortio.ServeHTTP(w, r)
	})
	mux.Handle("/", fortio)
	return mux
}

func describe(i *agentwire.RunInfo) string {
	rep := "warmup"
	if i.Repetition > 0 {
		rep = "rep " + strconv.Itoa(i.Repetition)
	}
	return fmt.Sprintf("%s %s %s %s against %s since %s", i.Scenario, i.Target, i.Profile, rep, i.URL, i.Started.UTC().Format(time.RFC3339))
}

func (s *Server) info() *agentwire.RunInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil
	}
	c := *s.current
	return &c
}

func (s *Server) setInfo(i *agentwire.RunInfo) {
	s.mu.Lock()
	s.current = i
	s.mu.Unlock()
}

func reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the reply"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, e agentwire.ErrorReply) {
	s.Log.Printf("%s %s from %s: %d %s", r.Method, r.URL.Path, r.RemoteAddr, code, e.Error)
	reply(w, code, e)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.refuse(w, r, http.StatusMethodNotAllowed, agentwire.ErrorReply{Error: r.Method + " not allowed: use GET"})
		return
	}
	info := s.info()
	reply(w, http.StatusOK, agentwire.StatusReply{
		Busy: info != nil, Run: info, FortioRuns: len(rapi.GetAllRuns()), Limits: s.Limits,
		Tool: results.CurrentTool(), Machine: results.CurrentMachine(),
	})
}

// readRequest reads and validates the body of check and run; it has
// answered (and returns nil) when the request is bad.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) *agentwire.RunRequest {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		s.refuse(w, r, http.StatusMethodNotAllowed, agentwire.ErrorReply{Error: r.Method + " not allowed: POST a JSON RunRequest"})
		return nil
	}
	req, ferr := decode(http.MaxBytesReader(w, r.Body, maxBody))
	if ferr != nil {
		if strings.Contains(ferr.msg, "request body too large") {
			s.refuse(w, r, http.StatusRequestEntityTooLarge, agentwire.ErrorReply{Error: fmt.Sprintf("body over %d bytes", maxBody)})
			return nil
		}
		s.refuse(w, r, http.StatusBadRequest, agentwire.ErrorReply{Error: ferr.Error(), Field: ferr.field})
		return nil
	}
	if ferr := validate(req, s.Limits); ferr != nil {
		s.refuse(w, r, http.StatusBadRequest, agentwire.ErrorReply{Error: ferr.Error(), Field: ferr.field})
		return nil
	}
	return req
}

// check sends one GET (the scenario's headers, its timeout) to the request's
// URL from the agent: any HTTP answer will do.
func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	req := s.readRequest(w, r)
	if req == nil {
		return
	}
	u := req.Target.RequestURL(req.Scenario.Path)
	ctx, cancel := context.WithTimeout(r.Context(), req.Scenario.Timeout.Std())
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, agentwire.ErrorReply{Error: err.Error(), Field: "target.url"})
		return
	}
	for _, h := range req.Scenario.Headers {
		if strings.EqualFold(h.Name, "host") {
			hr.Host = h.Value
			continue
		}
		hr.Header.Set(h.Name, h.Value)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		s.refuse(w, r, http.StatusBadGateway, agentwire.ErrorReply{Error: fmt.Sprintf("%s does not answer from the agent: %v", u, err)})
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	reply(w, http.StatusOK, agentwire.CheckReply{URL: u, Status: resp.StatusCode})
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	req := s.readRequest(w, r)
	if req == nil {
		return
	}
	if !s.running.TryLock() {
		msg := "another run is in progress"
		if info := s.info(); info != nil {
			msg = "another run is in progress (" + describe(info) + ")"
		}
		s.refuse(w, r, http.StatusConflict, agentwire.ErrorReply{Error: msg + "; one run at a time (two would measure each other)"})
		return
	}
	defer s.running.Unlock()
	if runs := rapi.GetAllRuns(); len(runs) > 0 && !s.Standalone {
		ids := make([]string, 0, len(runs))
		for id := range runs {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
		sort.Strings(ids)
		s.refuse(w, r, http.StatusConflict, agentwire.ErrorReply{Error: "fortio's REST API is running load (run " + strings.Join(ids, ", ") + "); wait for it or stop it (/fortio/rest/stop)"})
		return
	}

	ereq := req.EngineRequest()
	info := &agentwire.RunInfo{
		Scenario: req.Scenario.Name, Target: req.Target.Name, Profile: req.Profile.Name,
		Repetition: req.Repetition, URL: req.Target.RequestURL(req.Scenario.Path), Started: time.Now(),
	}
	s.setInfo(info)
	defer s.setInfo(nil)

	ctx, cancel := context.WithTimeout(r.Context(), agentwire.Bound(req))
	defer cancel()
	var stoppedByFortio bool
	eng := &fortioengine.Engine{Started: func(o *fhttp.HTTPRunnerOptions) func() {
		// Listed in fortio's REST status like fortio's own runs, so that
		// /fortio/rest/status shows it and /fortio/rest/stop stops it.
		id := rapi.NextRunID()
		o.RunID = id
		aborter := rapi.UpdateRun(&o.RunnerOptions)
		s.mu.Lock()
		s.current.FortioRunID = id
		s.mu.Unlock()
		return func() {
			if st := rapi.GetRun(id); st != nil && st.State == rapi.StateStopping {
				stoppedByFortio = true
			}
			// The run is over: what fortio's own REST runs send, for a
			// /fortio/rest/stop?wait=on waiting on it (never blocking).
			select {
			case aborter.StartChan <- false:
			default:
			}
			rapi.RemoveRun(id)
		}
	}}
	if s.Standalone {
		eng.Started = nil
	}
	s.Log.Printf("run %s: started (%v qps, %d connections, %s)", describe(info), req.Profile.QPS, req.Profile.Connections, req.Profile.Duration)
	live := func(l engine.Live) {
		s.mu.Lock()
		if s.current != nil {
			s.current.Requests, s.current.Errors = l.Requests, l.Errors
		}
		s.mu.Unlock()
	}
	res, err := eng.Run(ctx, ereq, live)
	switch {
	case err != nil:
		s.refuse(w, r, http.StatusInternalServerError, agentwire.ErrorReply{Error: "load failed: " + err.Error()})
		return
	case r.Context().Err() != nil:
		s.Log.Printf("run %s: client went away, stopped after %v", describe(info), time.Since(info.Started).Round(time.Millisecond))
		return
	case res.Interrupted && errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.refuse(w, r, http.StatusInternalServerError, agentwire.ErrorReply{Error: fmt.Sprintf("run still going after %v, stopped", agentwire.Bound(req))})
		return
	case res.Interrupted || stoppedByFortio:
		s.refuse(w, r, http.StatusConflict, agentwire.ErrorReply{Error: "the run was stopped (fortio's /fortio/rest/stop or the agent shutting down); not kept"})
		return
	}
	rep, err := results.NewRep(ereq, res, results.CurrentTool(), results.CurrentMachine())
	if err == nil {
		var doc []byte
		if doc, err = results.RepDocument(rep, res.Native); err == nil {
			s.Log.Printf("run %s: done, %d requests, %d errors, %.1f qps", describe(info), res.Requests, res.Errors, res.ActualQPS)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
			_, _ = w.Write(doc)
			return
		}
	}
	s.refuse(w, r, http.StatusInternalServerError, agentwire.ErrorReply{Error: "encoding the result: " + err.Error()})
}
