package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/delayproxy"
)

func init() {
	commands["delay-proxy"] = command{
		summary: "a pass-through HTTP proxy that holds each request a set time (a stand-in with a known cost)",
		run:     runDelayProxy,
	}
}

// runDelayProxy serves a delayproxy.Proxy until SIGTERM or SIGINT, then
// prints how long it held the requests: the known part of the answer.
func runDelayProxy(args []string) int {
	fs := flag.NewFlagSet("bookload delay-proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "`ADDRESS` to listen on (port 0: any free one)")
	to := fs.String("to", "", "`URL` of the upstream (scheme and host; each request's path is kept)")
	delay := fs.Duration("delay", 0, "how long each request is held before it is passed on (busy wait, µs precision)")
	conns := fs.Int("connections", 100, "keep-alive connections kept to the upstream")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload delay-proxy --to URL --delay 0.2ms [--listen 127.0.0.1:0] [--connections 100]")
		fmt.Fprintln(fs.Output(), "\nPrints \"listening on http://ADDRESS\" once ready; on SIGTERM or SIGINT prints \"held N requests, mean D\" and stops.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	u, err := url.Parse(*to)
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(os.Stderr, "bookload delay-proxy: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *to == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		fmt.Fprintf(os.Stderr, "bookload delay-proxy: --to %q: want an http(s) URL, e.g. http://127.0.0.1:9080\n", *to)
		return 2
	case *delay < 0 || *delay > time.Second:
		fmt.Fprintf(os.Stderr, "bookload delay-proxy: --delay %v: want 0 to 1s\n", *delay)
		return 2
	case *conns < 1:
		fmt.Fprintf(os.Stderr, "bookload delay-proxy: --connections %d: want at least 1\n", *conns)
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bookload delay-proxy: %v\n", err)
		return 1
	}
	p := delayproxy.New(u, *delay, *conns)
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	<-stop
	_ = srv.Close()
	n, mean := p.Held()
	fmt.Printf("held %d requests, mean %v\n", n, mean)
	return 0
}
