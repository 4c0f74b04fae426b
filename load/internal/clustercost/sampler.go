package clustercost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// DefaultInterval is how often a window is sampled between its ends (for
// peak memory, and to catch the CPU of containers that go away).
const DefaultInterval = 5 * time.Second

// Sampler samples the cluster's containers through an API server proxy.
type Sampler struct {
	API           *kube.API
	AppNamespaces []string
	// Interval between samples; 0 means DefaultInterval.
	Interval time.Duration
	Now      func() time.Time
}

func (s *Sampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Snapshot reads every node's summary, all nodes at once. A node whose
// summary cannot be read is listed in Failed; no node at all is an error.
func (s *Sampler) Snapshot(ctx context.Context) (Snapshot, error) {
	nodes, err := s.API.Nodes(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("cluster cost: listing nodes: %w", err)
	}
	if len(nodes) == 0 {
		return Snapshot{}, fmt.Errorf("cluster cost: the API server lists no nodes")
	}
	at := s.now()
	sums := make([]*KubeletSummary, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { sums[i], errs[i] = NodeSummary(ctx, s.API, n) })
	}
	wg.Wait()
	snap := NewSnapshot(at, sums)
	for i, err := range errs {
		if err != nil {
			snap.Failed = append(snap.Failed, fmt.Sprintf("node %s: %v", nodes[i], err))
		}
	}
	if snap.Nodes == 0 {
		return Snapshot{}, fmt.Errorf("cluster cost: no node's kubelet summary could be read: %s", snap.Failed[0])
	}
	return snap, nil
}

// Name implements Source.
func (s *Sampler) Name() string { return SummarySource }

// Probe implements Source: one snapshot.
func (s *Sampler) Probe(ctx context.Context) error {
	if _, err := s.Snapshot(ctx); err != nil {
		return fmt.Errorf("%w (the cost needs GET on nodes and nodes/proxy)", err)
	}
	return nil
}

// Begin implements Source.
func (s *Sampler) Begin(ctx context.Context) (Window, error) { return s.Start(ctx) }

// SampledWindow is a window being sampled.
type SampledWindow struct {
	s      *Sampler
	cls    *Classifier
	mu     sync.Mutex
	acc    *Accumulator
	stop   chan struct{}
	done   chan struct{}
	errors []string
}

// Start learns the pods' groups, takes the first sample and samples every
// Interval until Stop.
func (s *Sampler) Start(ctx context.Context) (*SampledWindow, error) {
	cls := NewClassifier(s.AppNamespaces)
	if err := cls.Learn(ctx, s.API); err != nil {
		return nil, fmt.Errorf("cluster cost: listing pods: %w", err)
	}
	start := s.now()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	w := &SampledWindow{s: s, cls: cls, acc: NewAccumulator(start), stop: make(chan struct{}), done: make(chan struct{})}
	w.acc.Add(snap)
	iv := s.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(iv)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			snap, err := s.Snapshot(ctx)
			w.mu.Lock()
			if err != nil {
				w.errors = append(w.errors, err.Error())
			} else {
				w.acc.Add(snap)
			}
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// Stop takes the last sample (ctx may be done: it uses its own) and
// returns the window's cost, without requests (see Cost.SetRequests).
func (w *SampledWindow) Stop() *Cost {
	close(w.stop)
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var notes []string
	if err := w.cls.Learn(ctx, w.s.API); err != nil {
		notes = append(notes, "pods made during the window not classified by labels: "+err.Error())
	}
	snap, err := w.s.Snapshot(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		notes = append(notes, "last sample failed, the window ends at the one before: "+err.Error())
	} else {
		w.acc.Add(snap)
	}
	c := w.acc.Cost(w.cls)
	c.Notes = append(append(c.Notes, w.errors...), notes...)
	if len(c.Notes) > 20 {
		c.Notes = append(c.Notes[:20], fmt.Sprintf("... and %d more", len(c.Notes)-20))
	}
	return c
}
