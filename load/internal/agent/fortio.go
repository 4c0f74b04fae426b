package agent

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/ui"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
)

var (
	fortioOnce sync.Once
	fortioURL  *url.URL
	fortioErr  error
)

// StartFortio starts fortio's own server (ui.Serve: the UI, the REST API,
// the data directory browser, /debug and the echo handler) on a loopback
// port, once per process, and returns its base URL. ui.Serve makes its own
// mux and does not expose it, so the agent's listener forwards everything
// that is not bookload's to this server (see Handler): fortio then behaves
// exactly as the stock `fortio server` does, and the load of a bookload run
// goes from this process to the target directly, not through the proxy.
// dataDir is fortio's -data-dir (results saved by REST runs, browsed by the
// UI and `fortio report`).
func StartFortio(dataDir string) (*url.URL, error) {
	fortioOnce.Do(func() { fortioURL, fortioErr = startFortio(dataDir) })
	return fortioURL, fortioErr
}

func startFortio(dataDir string) (*url.URL, error) {
	// ui.Serve reports only success, not the address it got, so it is given a
	// port known to be free a moment ago; a lost race is retried.
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("fortio: no loopback port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ok := ui.Serve(&ui.ServerConfig{
			Port:           addr,
			DebugPath:      "/debug",
			UIPath:         agentwire.UIPath,
			DataDir:        dataDir,
			PercentileList: []float64{50, 75, 90, 99, 99.9},
			TLSOptions:     &fhttp.TLSOptions{},
		})
		if ok {
			return &url.URL{Scheme: "http", Host: addr}, nil
		}
	}
	return nil, fmt.Errorf("fortio: ui.Serve could not listen on a loopback port (5 attempts)")
}

// Proxy forwards requests to fortio's server at u unchanged (Host included,
// so that fortio's result URLs name the address the client used), streaming
// as fortio writes (its UI flushes a run's progress).
func Proxy(u *url.URL) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
	}
}
