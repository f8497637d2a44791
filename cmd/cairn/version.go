package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is set at link time: -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

// version returns the release version, or the module version and VCS
// revision the binary was built from.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version",
		usage:   "version",
		help:    "Print Cairn's version, the Go version it was built with, and the platform.",
		setup: func(fs *flag.FlagSet) runFunc {
			return func(_ context.Context, env *environment) error {
				fmt.Fprintf(env.stdout, "cairn %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
		},
	}
}
