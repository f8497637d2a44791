package main

import (
	"strings"
	"testing"
)

// TestVersionFlag checks that cairn --version prints what cairn version
// prints.
func TestVersionFlag(t *testing.T) {
	output := func(args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		code := run(t.Context(), args, &environment{
			stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
			getenv: func(string) string { return "" },
		})
		if code != exitOK || stderr.Len() > 0 {
			t.Fatalf("cairn %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
	want := output("version")
	if !strings.HasPrefix(want, "cairn ") {
		t.Fatalf("cairn version printed %q", want)
	}
	if got := output("--version"); got != want {
		t.Errorf("cairn --version printed %q, want what cairn version prints, %q", got, want)
	}
}
