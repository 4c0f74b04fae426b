// Command fortio is the test cluster's stand-in for the stock fortio image
// (fortio/fortio), which no registry serves to this project's machines: the
// same server, built from fortio's own packages at the version in go.mod
// (fortio.org/fortio/ui serves the UI, the REST API /fortio/rest/run and the
// saved results), taking the arguments overlays/base/fortio.yaml passes.
// scripts/cluster.sh builds it into a FROM-scratch image under the manifest's
// image name; the test output says so.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/ui"
	"fortio.org/fortio/version"
)

// disabledOnly are the stock server's other listeners: the manifest turns them
// off, and the stand-in has none.
var disabledOnly = []string{"grpc-port", "redirect-port", "tcp-port", "udp-port"}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "server" {
		fmt.Fprintln(os.Stderr, "usage: fortio server -http-port PORT -data-dir DIR [-grpc-port disabled ...]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	port := fs.String("http-port", "8080", "port of the HTTP server (UI, REST API, echo)")
	dataDir := fs.String("data-dir", ".", "directory for saved results")
	others := map[string]*string{}
	for _, name := range disabledOnly {
		others[name] = fs.String(name, "disabled", "only \"disabled\" (the stand-in serves HTTP only)")
	}
	_ = fs.Parse(os.Args[2:])
	for name, v := range others {
		if *v != "disabled" {
			fmt.Fprintf(os.Stderr, "fortio stand-in: -%s %q: only \"disabled\" is supported\n", name, *v)
			os.Exit(2)
		}
	}
	cfg := &ui.ServerConfig{
		Port:       *port,
		DebugPath:  "/debug",
		UIPath:     "/fortio/",
		DataDir:    *dataDir,
		TLSOptions: &fhttp.TLSOptions{},
	}
	if !ui.Serve(cfg) {
		os.Exit(1)
	}
	fmt.Printf("fortio %s stand-in serving on :%s (data in %s)\n", version.Short(), *port, *dataDir)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
