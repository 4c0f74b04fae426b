// Package results is the result store: plain files, one directory per run,
// one file per repetition, each written atomically as the repetition ends.
//
//	results/2026-11-22T10-00-00Z_details-100rps-10c/
//	  run.json                          the run: scenario as parsed, targets,
//	                                    plan, finished repetitions, tool
//	                                    versions, machine, status
//	  <target>/<profile>/rep-01.json    fortio's result JSON (so `fortio report`
//	                                    opens it) plus a "bookload" object:
//	                                    counts, achieved rate, plain and
//	                                    corrected latency (summary in ms and
//	                                    the HdrHistogram, base64 V2 compressed,
//	                                    in µs)
//
// run.json is written when the run starts with status "partial" and rewritten
// after each repetition; only the last write of a run that finished every
// planned repetition says "complete". A run killed in any way therefore reads
// as partial, and lists exactly the repetitions whose files are whole.
// compare and report only read this store; they never need the targets again.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// SchemaVersion of run.json and of the "bookload" object in repetition files.
const SchemaVersion = 1

// Run statuses.
const (
	StatusPartial  = "partial"
	StatusComplete = "complete"
)

// RunFile is the name of the run description in a run directory.
const RunFile = "run.json"

// Run is run.json.
type Run struct {
	SchemaVersion int                 `json:"schema_version"`
	ID            string              `json:"id"`
	Status        string              `json:"status"`
	Note          string              `json:"note,omitempty"`
	StartedAt     time.Time           `json:"started_at"`
	UpdatedAt     time.Time           `json:"updated_at"`
	FinishedAt    *time.Time          `json:"finished_at,omitempty"`
	Scenario      *scenario.Scenario  `json:"scenario"`
	Targets       []loadtarget.Target `json:"targets"`
	Engines       map[string]string   `json:"engines"` // target name -> engine
	Repetitions   int                 `json:"repetitions"`
	Plan          []Slot              `json:"plan"` // measured repetitions in run order
	Done          []Slot              `json:"done"` // finished repetitions, with their files
	Labels        map[string]string   `json:"labels,omitempty"`
	Tool          Tool                `json:"tool"`
	Machine       Machine             `json:"machine"`
	// Sequential is set when the run went on until its verdicts were decided
	// (--until-decided): its plan is then the most the budget allows, and
	// the run is complete when every profile has stopped.
	Sequential *Sequential `json:"sequential,omitempty"`
}

// Sequential is how a run made with --until-decided chose its length.
type Sequential struct {
	Baseline  string             `json:"baseline"`
	MarginsMS map[string]float64 `json:"margins_ms"`
	// PrecisionMS is, per metric, the half-width every difference's
	// interval had to reach (--precision); absent when none was asked.
	PrecisionMS map[string]float64 `json:"precision_ms,omitempty"`
	// PartsPrecisionMS is the same for waterfall parts at p50, by segment
	// key (hop:client, ...; --part-precision).
	PartsPrecisionMS map[string]float64 `json:"parts_precision_ms,omitempty"`
	BudgetSeconds    float64            `json:"budget_seconds"`
	// Stopped says, per profile, after how many repetitions and why:
	// decided, or the budget spent with the verdicts still open.
	Stopped map[string]string `json:"stopped"`
}

// Slot is one repetition of one profile on one target.
type Slot struct {
	Profile    string `json:"profile"`
	Target     string `json:"target"`
	Repetition int    `json:"repetition"`
	File       string `json:"file,omitempty"` // relative to the run directory
}

// RepPath is where a slot's file goes, relative to the run directory.
func RepPath(targetName, profile string, rep int) string {
	return filepath.Join(targetName, profile, fmt.Sprintf("rep-%02d.json", rep))
}

// Rep is the "bookload" object of a repetition file.
type Rep struct {
	SchemaVersion   int              `json:"schema_version"`
	Scenario        string           `json:"scenario"`
	Target          string           `json:"target"`
	TargetURL       string           `json:"target_url"`
	Profile         scenario.Profile `json:"profile"`
	Repetition      int              `json:"repetition"`
	Engine          string           `json:"engine"`
	Start           time.Time        `json:"start"`
	DurationSeconds float64          `json:"duration_seconds"`
	RequestedQPS    float64          `json:"requested_qps"`
	ActualQPS       float64          `json:"actual_qps"`
	Requests        int64            `json:"requests"`
	Errors          int64            `json:"errors"`
	Codes           map[string]int64 `json:"codes"` // HTTP status -> count; "-1" = connection error
	Latency         Latency          `json:"latency"`
	// Hops is where the time went by the answers' Server-Timing headers
	// (package hops); absent in runs before it and when no answer had one.
	Hops           *hops.Doc         `json:"hops,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Knobs          map[string]string `json:"knobs,omitempty"`
	EngineMetadata map[string]any    `json:"engine_metadata,omitempty"`
	Tool           Tool              `json:"tool"`
	Machine        Machine           `json:"machine"`
}

// Latency holds both views of one repetition's latency.
type Latency struct {
	// Plain is measured from when each request was sent.
	Plain Distribution `json:"plain"`
	// Corrected is measured from when fortio's schedule meant to send it
	// (coordinated omission corrected); equal to Plain when the target keeps up.
	Corrected Distribution `json:"corrected"`
}

// Distribution is a summary in milliseconds and the full histogram.
type Distribution struct {
	SummaryMS latency.Summary `json:"summary_ms"`
	// HdrHistogram in µs, V2 compressed and base64-encoded: the format of
	// HdrHistogram log files, readable by every HdrHistogram implementation.
	HdrHistogram string `json:"hdr_histogram_us"`
}

// Store writes one run directory.
type Store struct {
	mu  sync.Mutex
	dir string
	run Run
	now func() time.Time
}

// Create makes the run directory under out, named <UTC start>_<scenario>, and
// writes run.json with status partial.
func Create(out string, run Run, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	start := now().UTC()
	base := start.Format("2006-01-02T15-04-05Z") + "_" + run.Scenario.Name
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(out, base)
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		dir = filepath.Join(out, fmt.Sprintf("%s-%d", base, i))
	}
	run.SchemaVersion = SchemaVersion
	run.ID = filepath.Base(dir)
	run.Status = StatusPartial
	run.StartedAt = start
	run.Done = []Slot{}
	s := &Store{dir: dir, run: run, now: now}
	return s, s.writeRun()
}

// Dir is the run directory.
func (s *Store) Dir() string { return s.dir }

// Run returns a copy of run.json as last written.
func (s *Store) Run() Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	r.Done = append([]Slot(nil), s.run.Done...)
	return r
}

// Add writes one finished repetition (native is the engine's own result
// document, or nil) and records it in run.json.
func (s *Store) Add(rep *Rep, native json.RawMessage) (string, error) {
	rel := RepPath(rep.Target, rep.Profile.Name, rep.Repetition)
	data, err := repDocument(rep, native)
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := WriteFileAtomic(path, data); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.Done = append(s.run.Done, Slot{Profile: rep.Profile.Name, Target: rep.Target, Repetition: rep.Repetition, File: rel})
	return path, s.writeRun()
}

// RepDocument is a repetition file's content: the engine's own document
// (native, may be nil) with rep as its "bookload" object, replacing any there.
func RepDocument(rep *Rep, native json.RawMessage) ([]byte, error) {
	return repDocument(rep, native)
}

// repDocument merges the engine's document with our "bookload" object.
func repDocument(rep *Rep, native json.RawMessage) ([]byte, error) {
	doc := map[string]json.RawMessage{}
	if len(native) > 0 {
		if err := json.Unmarshal(native, &doc); err != nil {
			return nil, fmt.Errorf("engine result is not a JSON object: %w", err)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	doc["bookload"] = b
	return json.MarshalIndent(doc, "", "  ")
}

// Stopped records why a sequential run's profile stopped.
func (s *Store) Stopped(profile, why string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run.Sequential == nil {
		return errors.New("not a sequential run")
	}
	if s.run.Sequential.Stopped == nil {
		s.run.Sequential.Stopped = map[string]string{}
	}
	s.run.Sequential.Stopped[profile] = why
	return s.writeRun()
}

// Finish records the final status and a note (why it is partial).
func (s *Store) Finish(status, note string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.now().UTC()
	s.run.Status = status
	s.run.Note = note
	s.run.FinishedAt = &t
	return s.writeRun()
}

func (s *Store) writeRun() error {
	s.run.UpdatedAt = s.now().UTC()
	data, err := json.MarshalIndent(s.run, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(s.dir, RunFile), append(data, '\n'))
}

// Loaded is a run read back from disk.
type Loaded struct {
	Dir  string
	Run  Run
	Reps []Rep // in the order they finished
}

// Open reads a run directory: run.json and every repetition it lists.
func Open(dir string) (*Loaded, error) {
	data, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, err
	}
	l := &Loaded{Dir: dir}
	if err := json.Unmarshal(data, &l.Run); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	if l.Run.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d is newer than this bookload's %d", dir, l.Run.SchemaVersion, SchemaVersion)
	}
	for _, slot := range l.Run.Done {
		path := filepath.Join(dir, slot.File)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Bookload *Rep `json:"bookload"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if doc.Bookload == nil {
			return nil, fmt.Errorf("%s: no \"bookload\" object", path)
		}
		l.Reps = append(l.Reps, *doc.Bookload)
	}
	return l, nil
}

// FindRuns expands paths into run directories: a directory holding run.json
// is a run; any other directory contributes its subdirectories that are runs
// (so `bookload compare results` reads every run in results/).
func FindRuns(paths []string) ([]string, error) {
	var runs []string
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, RunFile)); err == nil {
			runs = append(runs, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(p, e.Name(), RunFile)); e.IsDir() && err == nil {
				found = append(found, filepath.Join(p, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: not a run directory (no %s) and holds none", p, RunFile)
		}
		sort.Strings(found)
		runs = append(runs, found...)
	}
	return runs, nil
}

// OpenAll opens every run found under paths (see FindRuns).
func OpenAll(paths []string) ([]*Loaded, error) {
	runDirs, err := FindRuns(paths)
	if err != nil {
		return nil, err
	}
	var runs []*Loaded
	for _, d := range runDirs {
		l, err := Open(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, l)
	}
	return runs, nil
}
