package main

import (
	"fmt"
	"os"

	"github.com/cairnkg/cairn/knowledge/interpret/isolate"
)

// init makes this binary an interpretation worker when the files service
// started it as one (`cairn interpret-worker`, with isolate.WorkerEnv set):
// it parses one file from stdin under its limits, writes the result to
// stdout and exits. The command is hidden: it is not for people to run.
//
// It is dispatched here, before main, rather than as a command: a worker
// needs none of the commands' flags, configuration or signal handling, and
// cmd/cairn's tests run the service in their own process, whose executable
// (the test binary, which the service starts as its worker) never calls
// main but does run init.
func init() {
	if len(os.Args) > 1 && os.Args[1] == isolate.WorkerArg && os.Getenv(isolate.WorkerEnv) == "1" {
		if err := isolate.ServeWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "cairn %s: %v\n", isolate.WorkerArg, err)
			os.Exit(exitError)
		}
		os.Exit(exitOK)
	}
}
