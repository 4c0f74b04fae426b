package hostile

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSlowHeads: a server that closes an
// unfinished head counts as closing every slow head; one that never does,
// as none.
func TestSlowHeads(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ReadHeaderTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()
	dialed, closed := SlowHeads(context.Background(), strings.TrimPrefix(srv.URL, "http://"), 5, 20*time.Millisecond, 3*time.Second)
	if dialed != 5 || closed != 5 {
		t.Errorf("with a head deadline: %d made, %d closed; want 5 and 5", dialed, closed)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 10) // accepted, never read, closed at the end
	defer func() {
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	dialed, closed = SlowHeads(context.Background(), l.Addr().String(), 3, 20*time.Millisecond, 300*time.Millisecond)
	if dialed != 3 || closed != 0 {
		t.Errorf("without one: %d made, %d closed; want 3 and 0", dialed, closed)
	}
}

// TestNonReadersAndHealth: the non-readers' requests reach the server, and
// /health is asked on a new connection.
func TestNonReadersAndHealth(t *testing.T) {
	got := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.URL.Path }))
	defer srv.Close()
	cs, err := NonReaders(strings.TrimPrefix(srv.URL, "http://"), "/metrics", 2, 3, time.Second)
	if err != nil || len(cs) != 2 {
		t.Fatalf("NonReaders: %d connections, %v", len(cs), err)
	}
	defer Close(cs)
	if p := <-got; p != "/metrics" {
		t.Errorf("a non-reader asked for %q", p)
	}
	if _, err := Health(srv.URL, time.Second); err != nil {
		t.Errorf("Health: %v", err)
	}
	if _, err := NonReaders("127.0.0.1:1", "/metrics", 1, 1, time.Second); err == nil {
		t.Error("NonReaders to a closed port: no error")
	}
}
