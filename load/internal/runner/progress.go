package runner

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
)

// IsTerminal reports whether f is a character device (a terminal), so that the
// progress line, which rewrites itself with \r, is only drawn for people.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress draws one self-overwriting status line.
type progress struct {
	mu sync.Mutex
	w  io.Writer // nil: quiet
}

func (p *progress) show(i, total int, s Step, reps int, l engine.Live) {
	if p.w == nil {
		return
	}
	what := fmt.Sprintf("rep %d/%d", s.Repetition, reps)
	if s.Warmup {
		what = "warmup"
	}
	qps := 0.0
	if l.Elapsed > 0 {
		qps = float64(l.Requests) / l.Elapsed.Seconds()
	}
	counts := fmt.Sprintf("%.1f qps  %d errors", qps, l.Errors)
	if l.Requests < 0 {
		counts = "(remote: counts at the end)"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s %s %s  %4.1fs/%s  %s",
		i, total, s.Target.Name, s.Profile.Name, what,
		l.Elapsed.Seconds(), s.Profile.Duration.Std().Round(time.Millisecond), counts)
}

func (p *progress) clear() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
}
