package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func init() {
	commands["agent"] = command{
		summary: "serve fortio's UI and REST API plus bookload's run endpoint (the in-cluster load client)",
		run:     runAgent,
	}
}

// runAgent is the load client of a cluster: fortio's server (UI, REST API,
// echo) and /bookload/v1/run, which runs one repetition with bookload's
// per-request recording (see load/README.md, "In a cluster").
func runAgent(args []string) int {
	fs := flag.NewFlagSet("bookload agent", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "`ADDRESS` to listen on (port 0: any free one)")
	dataDir := fs.String("data-dir", ".", "fortio's data `DIR`: where its REST runs save results (save=on) and its UI browses them")
	lim := agent.DefaultLimits
	maxDur := fs.Duration("max-duration", lim.MaxDuration.Std(), "longest profile duration a request may ask for")
	fs.IntVar(&lim.MaxConnections, "max-connections", lim.MaxConnections, "most connections a request may ask for")
	fs.Float64Var(&lim.MaxQPS, "max-qps", lim.MaxQPS, "highest rate a request may ask for")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload agent [--listen :8080] [--data-dir DIR] [--max-duration 10m] [--max-connections N] [--max-qps N]")
		fmt.Fprintln(fs.Output(), "\nServes fortio's UI and REST API under /fortio/ and bookload's endpoints under /bookload/v1/;")
		fmt.Fprintln(fs.Output(), "drive it with `bookload run SCENARIO --target NAME=bookload+http://HOST:PORT`. Prints")
		fmt.Fprintln(fs.Output(), "\"listening on http://ADDRESS\" once ready; stops on SIGTERM or SIGINT.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bookload agent: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *maxDur <= 0 || lim.MaxConnections < 1 || lim.MaxQPS <= 0 {
		fmt.Fprintln(os.Stderr, "bookload agent: --max-duration, --max-connections and --max-qps must be > 0")
		return 2
	}
	lim.MaxDuration = scenario.Duration(*maxDur)
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "bookload agent: --data-dir %s: not a directory\n", *dataDir)
		return 2
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	logger := log.New(os.Stderr, "bookload agent: ", log.LstdFlags|log.LUTC)
	// fortio logs every REST call and UI page at info level.
	flog.SetLogLevelQuiet(flog.Warning)

	fortioURL, err := agent.StartFortio(*dataDir)
	if err != nil {
		logger.Print(err)
		return 1
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Print(err)
		return 1
	}
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           agent.NewServer(lim, logger).Handler(agent.Proxy(fortioURL), agentwire.UIPath),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Printf("listening on http://%s\n", l.Addr())
	logger.Printf("fortio %s; limits: duration %s, %d connections, %v qps", fortioURL, lim.MaxDuration, lim.MaxConnections, lim.MaxQPS)
	select {
	case err := <-done:
		logger.Print(err)
		return 1
	case sig := <-stop:
		logger.Printf("%v: stopping (a run in progress is dropped)", sig)
	}
	// A run in progress is stopped at once (its client gets no result);
	// then the connections are closed.
	cancel()
	ctx, cancelShutdown := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelShutdown()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Print(err)
	}
	return 0
}
