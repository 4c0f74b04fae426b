package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

func init() {
	commands["local"] = command{"run the Bookinfo stack on loopback: up, down, status", runLocal}
}

func runLocal(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: bookload local up|down|status [flags]")
		return 2
	}
	switch args[0] {
	case "up":
		return localUp(args[1:])
	case "down":
		return localDown(args[1:])
	case "status":
		return localStatus(args[1:])
	default:
		fmt.Fprintf(os.Stderr, "bookload local: unknown subcommand %q (want up, down or status)\n", args[0])
		return 2
	}
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func localUp(args []string) int {
	fs := flag.NewFlagSet("bookload local up", flag.ContinueOnError)
	var cfg local.Config
	var opts local.Options
	var sets, without stringList
	fs.IntVar(&cfg.PortBase, "port-base", local.DefaultPortBase, "productpage's port; details, reviews, ratings take the next three")
	fs.StringVar(&cfg.Profile, "profile", "tuned", "HTTP knobs: tuned (defaults) or legacy (details without TCP_NODELAY, productpage without keep-alive)")
	fs.StringVar(&cfg.Reviews, "reviews", "v2", "reviews version: v1 (no stars), v2 (black), v3 (red)")
	fs.BoolVar(&opts.Detach, "detach", false, "return once the stack is ready and leave it running")
	fs.DurationVar(&opts.Timeout, "timeout", 120*time.Second, "how long to wait for every /health")
	fs.DurationVar(&opts.Grace, "grace", 15*time.Second, "drain time after SIGTERM before SIGKILL")
	fs.Var(&sets, "set", "extra variable for one service, service.NAME=value (repeatable), e.g. details.ACCESS_LOG=true")
	fs.Var(&without, "without", "do not start this service (repeatable); its port stays free for a stand-in")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, s := range sets {
		if err := cfg.ParseSet(s); err != nil {
			fmt.Fprintln(os.Stderr, "bookload local up:", err)
			return 2
		}
	}
	cfg.Without = without
	opts.Out = os.Stderr
	if err := local.Up(context.Background(), cfg, opts); err != nil {
		fmt.Fprintln(os.Stderr, "bookload local up:", err)
		return 1
	}
	return 0
}

func localDown(args []string) int {
	fs := flag.NewFlagSet("bookload local down", flag.ContinueOnError)
	base := fs.Int("port-base", local.DefaultPortBase, "port base of the stack to stop")
	all := fs.Bool("all", false, "stop every stack")
	grace := fs.Duration("grace", 15*time.Second, "drain time after SIGTERM before SIGKILL")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := local.Down(*base, *all, *grace, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bookload local down:", err)
		return 1
	}
	return 0
}

func localStatus(args []string) int {
	fs := flag.NewFlagSet("bookload local status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	stacks, err := local.Status(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload local status:", err)
		return 1
	}
	if *asJSON {
		if stacks == nil {
			stacks = []local.StackStatus{}
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(stacks)
		return 0
	}
	if len(stacks) == 0 {
		fmt.Println("no stack is running")
		return 0
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT BASE\tPROFILE\tREVIEWS\tMODE\tSERVICE\tPORT\tPID\tSTATE")
	for _, st := range stacks {
		mode := "foreground"
		if st.Detached {
			mode = "detached"
		}
		for _, s := range st.Services {
			state := "stopped"
			if s.Running && s.Healthy {
				state = "healthy"
			} else if s.Running {
				state = "unhealthy"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", st.PortBase, st.Profile, st.Reviews, mode, s.Name, s.Port, s.PID, state)
		}
	}
	tw.Flush()
	return 0
}
