package kube

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proxy is a `kubectl proxy` that bookload started.
type Proxy struct {
	// URL is where it serves: http://127.0.0.1:PORT.
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	logs strings.Builder
}

var servingRE = regexp.MustCompile(`Starting to serve on (127\.0\.0\.1:\d+)`)

// StartProxy runs `kubectl proxy --address 127.0.0.1 --port 0` (a free
// port, which kubectl prints) with the given kubeconfig and context (""
// for kubectl's defaults), until Stop. KUBECTL names another binary.
func StartProxy(ctx context.Context, kubeconfig, kubeContext string) (*Proxy, error) {
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = "kubectl"
	}
	args := []string{"proxy", "--address=127.0.0.1", "--port=0"}
	if kubeconfig != "" {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	if kubeContext != "" {
		args = append(args, "--context="+kubeContext)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = sysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Proxy{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.logs.Len() < 4096 {
			p.logs.Write(b)
		}
		return len(b), nil
	})
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kubectl proxy: %s not found (install kubectl, set KUBECTL, or give --api URL of a running proxy)", bin)
		}
		return nil, fmt.Errorf("kubectl proxy: %w", err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-addr:
		p.URL = "http://" + a
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("kubectl %s exited before serving: %s", strings.Join(args, " "), p.stderr())
	case <-time.After(30 * time.Second):
		p.Stop()
		return nil, fmt.Errorf("kubectl %s: not serving after 30 s: %s", strings.Join(args, " "), p.stderr())
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

func (p *Proxy) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.logs.String())
}

// Stop ends the proxy (SIGTERM, SIGKILL after 5 s) and waits for it.
func (p *Proxy) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
