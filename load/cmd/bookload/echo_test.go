package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEcho serves fortio's echo on a free port, checks that a POST body comes
// back, then stops it with SIGINT: exit 0, with the address on stdout.
func TestEcho(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	echoed := askThenInterrupt(func() (*http.Response, error) {
		return http.Post("http://"+addr+"/echo", "text/plain", strings.NewReader("hello bookinfo"))
	})
	stdout, code := capture(t, func() int { return runEcho([]string{"--listen", addr}) })
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got := <-echoed; got != "hello bookinfo" {
		t.Errorf("echoed %q", got)
	}
	if want := "listening on http://" + addr + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}

func TestEchoUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--nope"}} {
		if _, code := capture(t, func() int { return runEcho(args) }); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if _, code := capture(t, func() int { return runEcho([]string{"--listen", "256.0.0.1:1"}) }); code != 1 {
		t.Errorf("bad address: exit %d, want 1", code)
	}
}

// TestDelayProxy passes requests to an upstream after its delay and, when
// stopped, prints how many it held and for how long.
func TestDelayProxy(t *testing.T) {
	up := okServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	answered := askThenInterrupt(func() (*http.Response, error) { return http.Get("http://" + addr + "/details/0") })
	stdout, code := capture(t, func() int {
		return runDelayProxy([]string{"--listen", addr, "--to", up.URL, "--delay", "200us"})
	})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got := <-answered; got != `{"id":0}` {
		t.Errorf("answer %q", got)
	}
	if !strings.HasPrefix(stdout, "listening on http://"+addr+"\nheld 1 requests, mean ") {
		t.Errorf("stdout %q", stdout)
	}
	for _, args := range [][]string{{"--delay", "1ms"}, {"--to", "ftp://x", "--delay", "1ms"}, {"--to", up.URL, "--delay", "2s"}, {"--to", up.URL, "x"}} {
		if _, code := capture(t, func() int { return runDelayProxy(args) }); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// askThenInterrupt retries ask for up to 10 s until the server under test
// answers, sends the answer's body (or "(no answer)"), then SIGINTs this
// process, which the command under test takes as its stop.
func askThenInterrupt(ask func() (*http.Response, error)) <-chan string {
	got := make(chan string, 1)
	go func() {
		defer func() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if resp, err := ask(); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- string(body)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		got <- "(no answer)"
	}()
	return got
}
