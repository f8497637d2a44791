// Command cairn is a knowledge service for AI agents: a knowledge graph with
// provenance, memories searchable by meaning, and per-agent consent, served
// over the Model Context Protocol.
//
// Run `cairn help` for the commands and `cairn <command> --help` for each.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go exitIfStuck(ctx, stopTimeout, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], &environment{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// stopTimeout bounds how long the process may take to end once Ctrl-C or
// SIGTERM asks it to: the shutdownTimeout in-flight requests get, and time
// to close the stores after them.
const stopTimeout = shutdownTimeout + 5*time.Second

// exitIfStuck ends the process with exitError, saying so on stderr, if it
// is still running the given time after ctx is cancelled. A call stuck in
// a blocking read, or an answer stdout no longer takes, must not keep alive
// a server that was told to stop: nothing but SIGKILL would end it.
func exitIfStuck(ctx context.Context, after time.Duration, stderr io.Writer, exit func(int)) {
	<-ctx.Done()
	time.Sleep(after)
	fmt.Fprintf(stderr, "cairn: still running %v after the signal to stop (a call or a write is stuck); exiting without finishing it\n", after)
	exit(exitError)
}

// Exit codes, decided here and nowhere else.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func commands() []*command {
	return []*command{serveCommand(), stdioCommand(), migrateCommand(), reembedCommand(), benchCommand(), backupCommand(), restoreCommand(), exportCommand(), importCommand(), jobsCommand(), adminCommand(), versionCommand()}
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, env *environment) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, env)
		}
		printHelp(env.stdout)
		return exitOK
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == args[0] {
			cmd = c
		}
	}
	if cmd == nil {
		fmt.Fprintf(env.stderr, "cairn: unknown command %q\n\n", args[0])
		printHelp(env.stderr)
		return exitUsage
	}
	exec, err := parse(cmd, args[1:], env)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = exec(ctx, env)
	}
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(env.stderr, "cairn %s: %v\n", cmd.name, err)
		return exitUsage
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return exitOK // interrupted: a normal way to stop a server
	default:
		fmt.Fprintf(env.stderr, "cairn %s: %s\n", cmd.name, oneLine(err))
		return exitError
	}
}

// oneLine returns err's message on one line: some errors (pgx's, when it
// tried several addresses) put each cause on a line of its own, and a
// startup failure should read as one line.
func oneLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.ReplaceAll(strings.Join(parts, "; "), ":; ", ": ")
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, `Cairn is a knowledge service for AI agents: entities and relationships with
provenance, memories searchable by meaning, and consent per agent, over MCP.

Usage: cairn <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'cairn <command> --help' for a command's flags; 'cairn --version' is
'cairn version'. Every flag can also be set by the CAIRN_* environment
variable its help names; a flag wins over it.
`)
}
