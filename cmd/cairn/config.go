package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/telemetry"
)

// A command is one subcommand: its flags, its help and what it runs.
type command struct {
	name    string
	summary string   // one line for `cairn help`
	usage   string   // the synopsis after "cairn "
	help    string   // paragraphs after the synopsis
	env     []envVar // flags that environment variables can set
	setup   func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command once its flags are parsed.
type runFunc func(ctx context.Context, env *environment) error

// envVar binds a flag to the environment variable that sets it when the flag
// is not given. Flags win over the environment.
type envVar struct {
	flag, env string
}

// environment is what a running command can reach: its streams, the
// environment and its own flag set.
type environment struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	fs             *flag.FlagSet
}

// commonFlags are shared by every command that opens the store.
type commonFlags struct {
	dataDir     string
	databaseURL string
	neo4j       neo4jSettings
	logLevel    string
	logFormat   string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	c.registerStore(fs)
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
}

// registerStore registers only the flags that select the stores.
func (c *commonFlags) registerStore(fs *flag.FlagSet) {
	fs.StringVar(&c.dataDir, "data-dir", "./cairn-data", "directory of the embedded store (serve, stdio and migrate create it if missing); unused with --database-url")
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL (with pgvector) to run on instead of the embedded store, as postgres://user:password@host:5432/db;\n        prefer the environment variable, which does not show the password to ps")
	c.neo4j.register(fs)
}

// storeEnv binds the flags that select the stores.
var storeEnv = slices.Concat([]envVar{
	{"data-dir", "CAIRN_DATA_DIR"},
	{"database-url", "CAIRN_DATABASE_URL"},
}, neo4jEnv)

var commonEnv = slices.Concat(storeEnv, []envVar{
	{"log-level", "CAIRN_LOG_LEVEL"},
	{"log-format", "CAIRN_LOG_FORMAT"},
})

// appConfig returns the configuration of the stores these flags select.
func (c *commonFlags) appConfig() appConfig {
	return appConfig{dataDir: c.dataDir, databaseURL: c.databaseURL, neo4j: c.neo4j}
}

// logger builds the logger every command writes to stderr with: in stdio
// mode stdout carries protocol frames only.
func (c *commonFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, usageError{fmt.Sprintf("--log-level: %q is not one of debug, info, warn, error", c.logLevel)}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(telemetry.LogHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(telemetry.LogHandler(slog.NewJSONHandler(w, opts))), nil
	default:
		return nil, usageError{fmt.Sprintf("--log-format: %q is not text or json", c.logFormat)}
	}
}

// usageError is a mistake in how the command was called (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parse parses args for cmd, then fills every flag that was not given from
// its environment variable, so that flags win over the environment.
func parse(cmd *command, args []string, env *environment) (runFunc, error) {
	fs := flag.NewFlagSet("cairn "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := cmd.setup(fs)
	env.fs = fs
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			printCommandHelp(env.stdout, cmd, fs)
			return nil, flag.ErrHelp
		}
		return nil, usageError{fmt.Sprintf("%v (see cairn %s --help)", err, cmd.name)}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, ev := range cmd.env {
		if given[ev.flag] {
			continue
		}
		if v, ok := lookupEnv(env.getenv, ev.env); ok {
			if err := fs.Set(ev.flag, v); err != nil {
				return nil, usageError{fmt.Sprintf("%s=%q: %v", ev.env, v, err)}
			}
		}
	}
	return run, nil
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// printCommandHelp writes a command's help: synopsis, description, and every
// flag with its environment variable and default.
func printCommandHelp(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: cairn %s\n\n%s\n", cmd.usage, strings.TrimSpace(cmd.help))
	envOf := map[string]string{}
	for _, ev := range cmd.env {
		envOf[ev.flag] = ev.env
	}
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", name)
		}
		fmt.Fprintf(&b, "\n        %s", usage)
		var extra []string
		if e := envOf[f.Name]; e != "" {
			extra = append(extra, "env "+e)
		}
		if f.DefValue != "" && f.DefValue != "false" {
			extra = append(extra, "default "+f.DefValue)
		}
		if len(extra) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(extra, ", "))
		}
		b.WriteString("\n")
	})
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", b.String())
	}
}

// absPath returns p made absolute, for configuration snippets that a client
// will run from another directory.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
