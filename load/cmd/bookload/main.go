// Command bookload runs the Bookinfo stack locally and measures it.
package main

import (
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "bookload: unknown command %q\n\n", args[0])
		usage()
		return 2
	}
	return cmd.run(args[1:])
}

type command struct {
	summary string
	run     func(args []string) int
}

// commands is filled by the files of this package, one file per subcommand.
var commands = map[string]command{}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bookload <command> [flags]\n\ncommands:")
	for _, name := range sortedCommandNames() {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'bookload <command> -h' for the flags of one command.")
}
