package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Options control how a stack is run.
type Options struct {
	Detach bool
	// Timeout bounds the wait for every /health to answer.
	Timeout time.Duration
	// Grace is how long a service may drain after SIGTERM before SIGKILL.
	Grace time.Duration
	Out   io.Writer // progress messages
}

func (o *Options) defaults() {
	if o.Timeout == 0 {
		o.Timeout = 120 * time.Second
	}
	if o.Grace == 0 {
		// The apps drain for SHUTDOWN_TIMEOUT_SECONDS (10 s by default).
		o.Grace = 15 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// started is a service process this bookload started.
type started struct {
	ServiceState
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is reaped
	err    error         // wait error, valid after exited is closed
}

func (s *started) gone() bool {
	select {
	case <-s.exited:
		return !groupAlive(s.PID)
	default:
		return false
	}
}

// Up starts a stack and waits until every service answers /health. With
// opts.Detach it returns then, leaving the services running; otherwise it
// stays until ctx is done, SIGINT/SIGTERM/SIGHUP arrives or a service dies,
// and stops every service before it returns.
func Up(ctx context.Context, cfg Config, opts Options) error {
	opts.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	repo, err := FindRepo()
	if err != nil {
		return err
	}
	state := StateDir(repo)
	if err := os.MkdirAll(stackDir(state, cfg.PortBase), 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if err := claimBase(state, cfg.PortBase, opts.Out); err != nil {
		return err
	}
	var toStart []string
	for _, svc := range Services {
		if slices.Contains(cfg.Without, svc) {
			continue
		}
		serve := filepath.Join(repo, "apps", svc, "serve")
		if _, err := os.Stat(serve); err != nil {
			return fmt.Errorf("%s: %s is missing; run 'make setup'", svc, serve)
		}
		port, _ := Port(cfg.PortBase, svc)
		if err := checkPortFree(port); err != nil {
			return fmt.Errorf("%s: %w", svc, err)
		}
		toStart = append(toStart, svc)
	}

	st := &StackState{PortBase: cfg.PortBase, Profile: cfg.Profile, Reviews: cfg.Reviews, Repo: repo, Started: time.Now().UTC()}
	if !opts.Detach {
		st.SupervisorPID = os.Getpid()
		st.SupervisorST, _ = procStartTime(st.SupervisorPID)
	}
	// Signals that arrive while the stack is starting must still stop it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	var procs []*started
	stopAll := func() {
		stopStarted(procs, opts.Grace)
		_ = removeStackFile(state, cfg.PortBase)
	}
	for _, svc := range toStart {
		p, err := startService(repo, state, svc, cfg, !opts.Detach)
		if err != nil {
			stopAll()
			return err
		}
		procs = append(procs, p)
		st.Services = append(st.Services, p.ServiceState)
		fmt.Fprintf(opts.Out, "started %-11s pid %-7d http://127.0.0.1:%d  log %s\n", svc, p.PID, p.Port, p.Log)
	}
	if err := st.save(state); err != nil {
		stopAll()
		return fmt.Errorf("writing stack file: %w", err)
	}
	if err := waitHealthy(ctx, procs, opts.Timeout, sigs); err != nil {
		stopAll()
		return err
	}
	if opts.Detach {
		fmt.Fprintf(opts.Out, "ready: http://127.0.0.1:%d/productpage (profile %s, reviews %s); stop it with: bookload local down --port-base %d\n",
			cfg.PortBase, cfg.Profile, cfg.Reviews, cfg.PortBase)
		return nil
	}
	fmt.Fprintf(opts.Out, "ready: http://127.0.0.1:%d/productpage (profile %s, reviews %s); Ctrl-C stops it\n", cfg.PortBase, cfg.Profile, cfg.Reviews)
	var died *started
	exits := make(chan *started, len(procs))
	for _, p := range procs {
		go func(p *started) { <-p.exited; exits <- p }(p)
	}
	select {
	case <-ctx.Done():
	case s := <-sigs:
		fmt.Fprintf(opts.Out, "%v: stopping the stack\n", s)
	case died = <-exits:
	}
	stopAll()
	if died != nil {
		return fmt.Errorf("%s exited unexpectedly (%w); the stack was stopped. Last lines of %s:\n%s", died.Name, died.err, died.Log, tail(died.Log, 20))
	}
	fmt.Fprintln(opts.Out, "stopped")
	return nil
}

// claimBase refuses a port base that a live stack uses and cleans the
// state of a dead one.
func claimBase(state string, base int, out io.Writer) error {
	old, err := loadStack(state, base)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		fmt.Fprintf(out, "removing unreadable stack file: %v\n", err)
		return removeStackFile(state, base)
	}
	if live := old.liveServices(); len(live) > 0 || old.supervisorAlive() {
		var pids []string
		for _, s := range live {
			pids = append(pids, fmt.Sprintf("%s pid %d", s.Name, s.PID))
		}
		return fmt.Errorf("a stack already runs on port base %d (%s); stop it with: bookload local down --port-base %d",
			base, strings.Join(pids, ", "), base)
	}
	fmt.Fprintf(out, "cleaned stale state of a stack on port base %d (no process left)\n", base)
	return removeStackFile(state, base)
}

func startService(repo, state, svc string, cfg Config, foreground bool) (*started, error) {
	logPath := filepath.Join(stackDir(state, cfg.PortBase), svc+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	env := cfg.Env(svc)
	cmd := exec.Command(filepath.Join(repo, "apps", svc, "serve"))
	cmd.Dir = filepath.Join(repo, "apps", svc)
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a terminal's Ctrl-C reaches bookload
	// only (which then drains each service) and so that stopping a service
	// also stops the workers it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if foreground {
		// A supervisor killed with SIGKILL cannot clean up; the kernel then
		// tells its children to drain and exit, so no orphan stays behind.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", svc, cmd.Path, err)
	}
	port, _ := Port(cfg.PortBase, svc)
	p := &started{cmd: cmd, exited: make(chan struct{})}
	p.ServiceState = ServiceState{Name: svc, Port: port, PID: cmd.Process.Pid, Log: logPath, Env: env}
	p.StartTime, _ = procStartTime(p.PID)
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// mergeEnv returns base with the keys of set replaced. SERVICES_DOMAIN is
// dropped: local peers are addressed by IP.
func mergeEnv(base []string, set map[string]string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || k == "SERVICES_DOMAIN" {
			continue
		}
		out = append(out, kv)
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, k+"="+set[k])
	}
	return out
}

func waitHealthy(ctx context.Context, procs []*started, timeout time.Duration, sigs <-chan os.Signal) error {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(procs)
	for len(pending) > 0 {
		var still []*started
		for _, p := range pending {
			select {
			case <-p.exited:
				return fmt.Errorf("%s exited during start (%w). Last lines of %s:\n%s", p.Name, p.err, p.Log, tail(p.Log, 20))
			default:
			}
			resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/health", p.Port))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body) // draining for reuse; the status decides
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					continue
				}
			}
			still = append(still, p)
		}
		pending = still
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			p := pending[0]
			return fmt.Errorf("%s did not answer http://127.0.0.1:%d/health within %v. Last lines of %s:\n%s",
				p.Name, p.Port, timeout, p.Log, tail(p.Log, 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case s := <-sigs:
			return fmt.Errorf("%v while starting: stack stopped", s)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// stopStarted drains every service at once (SIGTERM, SIGKILL after grace).
func stopStarted(procs []*started, grace time.Duration) {
	done := make(chan struct{}, len(procs))
	for _, p := range procs {
		go func(p *started) {
			stopGroup(p.PID, grace, p.gone)
			done <- struct{}{}
		}(p)
	}
	for range procs {
		<-done
	}
}
