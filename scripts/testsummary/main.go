// Command testsummary reads `go test -json` on stdin and writes what a plain
// `go test` would (a line per package, and the output of each failing
// test), then every skipped test with its reason (one line each: a skip
// that says nothing hides a gap), the slowest top-level tests (those of
// 10 s or more, at most ten: where the suite's time goes) and a final line
// "N passed, N failed, N skipped". scripts/test pipes the suite through it.
//
// Tests and subtests count alike. A package that fails without a failing
// test (a build error, a panic in TestMain, a timeout) counts as one failed
// test, so that the last line never says 0 failed of a broken run. The exit
// status is 1 when anything failed.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string  // build-output events
	Elapsed    float64 // seconds, on pass, fail and skip
}

// skip is a skipped test and why.
type skip struct {
	pkg, test, reason string
}

// timing is how long one top-level test took.
type timing struct {
	pkg, test string
	seconds   float64
}

// Slow tests are listed when they take at least slowSeconds, at most
// slowListed of them.
const (
	slowSeconds = 10
	slowListed  = 10
)

// summary counts results and holds the output of tests still running.
type summary struct {
	out                     io.Writer
	passed, failed, skipped int
	// pending holds each running test's output, by package and test.
	pending map[[2]string][]string
	// failedTests counts the failed tests of each package.
	failedTests map[string]int
	// slow holds the top-level tests that took slowSeconds or more.
	slow []timing
	// skips are the skipped tests, in the order they ended.
	skips []skip
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, pending: map[[2]string][]string{}, failedTests: map[string]int{}}
}

// noise are the lines -json (which implies -v) adds that a plain go test
// does not print.
func noise(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func (s *summary) handle(e event) {
	key := [2]string{e.Package, e.Test}
	if e.Test != "" && !strings.Contains(e.Test, "/") && e.Elapsed >= slowSeconds &&
		(e.Action == "pass" || e.Action == "fail") {
		s.slow = append(s.slow, timing{e.Package, e.Test, e.Elapsed})
	}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Test != "" && e.Action == "output":
		if !noise(e.Output) {
			s.pending[key] = append(s.pending[key], e.Output)
		}
	case e.Test != "" && e.Action == "pass":
		s.passed++
		delete(s.pending, key)
	case e.Test != "" && e.Action == "skip":
		s.skipped++
		s.skips = append(s.skips, skip{e.Package, e.Test, skipReason(s.pending[key])})
		delete(s.pending, key)
	case e.Test != "" && e.Action == "fail":
		s.failed++
		s.failedTests[e.Package]++
		for _, line := range s.pending[key] {
			fmt.Fprint(s.out, line)
		}
		delete(s.pending, key)
	case e.Test == "" && e.Action == "output":
		// The package's own lines: ok/FAIL/? lines, what TestMain
		// prints, a panic. "PASS" alone is what -v adds.
		if e.Output != "PASS\n" {
			fmt.Fprint(s.out, e.Output)
		}
	case e.Test == "" && e.Action == "fail":
		// Tests still running when the package failed (a timeout or a
		// panic) never report; show what they printed.
		for k, lines := range s.pending {
			if k[0] == e.Package {
				for _, line := range lines {
					fmt.Fprint(s.out, line)
				}
				delete(s.pending, k)
			}
		}
		if s.failedTests[e.Package] == 0 {
			s.failed++
		}
	}
}

func run(in io.Reader, out io.Writer) (failed bool, err error) {
	s := newSummary(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet's or the linker's output): as is.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	s.listSkips()
	s.listSlow()
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return s.failed > 0, nil
}

// skipReason is what a skipped test printed (t.Skip's message, with its
// file and line), on one line; "no reason given" when it printed nothing.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--- SKIP") {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	r := strings.Join(parts, " ")
	if len(r) > 240 {
		r = r[:240] + "…"
	}
	return r
}

// listSkips writes every skipped test with its reason.
func (s *summary) listSkips() {
	if len(s.skips) == 0 {
		return
	}
	fmt.Fprintf(s.out, "skipped tests (%d):\n", len(s.skips))
	for _, k := range s.skips {
		fmt.Fprintf(s.out, "  %s %s: %s\n", k.pkg, k.test, k.reason)
	}
}

// listSlow writes the slowest top-level tests, slowest first.
func (s *summary) listSlow() {
	if len(s.slow) == 0 {
		return
	}
	slices.SortFunc(s.slow, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
	fmt.Fprintf(s.out, "slowest tests (%d s or more):\n", slowSeconds)
	for _, t := range s.slow[:min(len(s.slow), slowListed)] {
		fmt.Fprintf(s.out, "  %6.1fs  %s %s\n", t.seconds, t.pkg, t.test)
	}
}

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}
