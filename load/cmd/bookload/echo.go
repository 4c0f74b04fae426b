package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"fortio.org/fortio/fhttp"
	"fortio.org/log"
)

func init() {
	commands["echo"] = command{
		summary: "serve fortio's echo server on loopback until stopped (the bench's cross-process floor)",
		run:     runEcho,
	}
}

// runEcho serves fortio's echo handler in this process, as a separate process
// from the load generator: `make bench` measures it next to the in-process
// echo, so the cost of the process hop alone is on the page.
func runEcho(args []string) int {
	fs := flag.NewFlagSet("bookload echo", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "`ADDRESS` to listen on (port 0: any free one)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload echo [--listen 127.0.0.1:0]\n\nPrints \"listening on http://ADDRESS\" once ready; stops on SIGTERM or SIGINT.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bookload echo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	// Caught before the server answers anything: a client that stops us as
	// soon as it got its first answer must not kill the process instead.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	log.SetLogLevelQuiet(log.Critical)
	_, addr := fhttp.ServeTCP(*listen, "")
	if addr == nil {
		fmt.Fprintf(os.Stderr, "bookload echo: cannot listen on %s\n", *listen)
		return 1
	}
	fmt.Printf("listening on http://%s\n", addr.String())
	<-stop
	return 0
}
