// Package hostile is the clients a broken or hostile peer would be, on raw
// sockets: slow heads (a request head sent one byte at a time, never
// finished) and non-readers (requests pipelined on a connection whose
// answers are never read), and a /health probe on a new connection. The
// bench's hostile soak floods a service with them in rounds. The e2e suite
// (tests/e2e/hostile_*_test.go) has its own copies: Go's internal rule keeps
// it from importing this package.
package hostile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// slowHeadText is the head a slow client dribbles: longer than any head
// deadline lets it finish at one byte per interval.
var slowHeadText = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + strings.Repeat("s", 4000)

// SlowHeads opens n connections to addr at once and on each sends a request
// head one byte every interval until the server closes the connection or
// limit has passed (or ctx ends). It returns once all have ended: how many
// connections were made, and how many the server closed before limit.
func SlowHeads(ctx context.Context, addr string, n int, interval, limit time.Duration) (dialed, closed int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			made, shut := slowHead(ctx, addr, interval, limit)
			mu.Lock()
			defer mu.Unlock()
			if made {
				dialed++
			}
			if shut {
				closed++
			}
		}()
	}
	wg.Wait()
	return dialed, closed
}

// slowHead is one slow connection: whether it was made, and whether the
// server closed it before limit.
func slowHead(ctx context.Context, addr string, interval, limit time.Duration) (made, closed bool) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false, false
	}
	defer conn.Close()
	start := time.Now()
	buf := make([]byte, 512)
	for i := 0; time.Since(start) < limit && ctx.Err() == nil; i++ {
		if i < len(slowHeadText) {
			_ = conn.SetWriteDeadline(time.Now().Add(interval))
			if _, err := conn.Write([]byte{slowHeadText[i]}); err != nil {
				return true, true
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(interval))
		if _, err := conn.Read(buf); err != nil && !isTimeout(err) {
			return true, true
		}
	}
	return true, false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// NonReaders opens n connections to addr and on each writes pipelined
// copies of `GET path` (for at most writeFor: a server that stops reading
// blocks the write), never reading an answer. Close the connections to end
// it; on an error the ones opened are closed.
func NonReaders(addr, path string, n, pipelined int, writeFor time.Duration) ([]net.Conn, error) {
	batch := []byte(strings.Repeat("GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", pipelined))
	var cs []net.Conn
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			Close(cs)
			return nil, fmt.Errorf("non-reading connection %d of %d to %s: %w", i+1, n, addr, err)
		}
		cs = append(cs, c)
		go func() {
			_ = c.SetWriteDeadline(time.Now().Add(writeFor))
			_, _ = c.Write(batch)
		}()
	}
	return cs, nil
}

// Close closes every connection of cs.
func Close(cs []net.Conn) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// Health asks base (http://host:port) for /health on a new connection and
// returns how long a 200 took, or what went wrong within timeout.
func Health(base string, timeout time.Duration) (time.Duration, error) {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := c.Get(base + "/health")
	if err != nil {
		return time.Since(start), err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Since(start), fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), nil
}
