package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestImportExportFromStdin (issue #35): cairn import - reads an export
// from standard input.
func TestImportExportFromStdin(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	export := strings.Join([]string{
		`{"kind":"header","data":{"format":"cairn-export","version":1,"cairn_version":"test","exported_at":"2026-01-02T03:04:05Z","users":[{"ID":"usr_stdin","Name":"bob","IsOwner":false}],"vectors":false,"consent":false,"audit":false}}`,
		`{"kind":"user","user":"usr_stdin","data":{"ID":"usr_stdin","Name":"bob","IsOwner":false}}`,
		`{"kind":"end","data":{"counts":{"user":1}}}`,
	}, "\n") + "\n"
	importFrom := func(stdin string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := run(t.Context(), []string{"import", "--data-dir", dataDir, "-"}, &environment{
			stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr,
			getenv: func(string) string { return "" },
		})
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := importFrom(export)
	if code != 0 || !strings.Contains(out, "written: 1 user,") || !strings.Contains(out, "checksum: absent") {
		t.Fatalf("cairn import -: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("cairn import -:\n%s", out)
	// Again: the user is held, and said so.
	code, out, errOut = importFrom(export)
	if code != 0 || !strings.Contains(out, "written: 0 user,") || !strings.Contains(out, "skipped, already held: 1 user") {
		t.Fatalf("cairn import - again: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("cairn import - again:\n%s", out)
	// An end line whose sum is not the file's: the import says so and
	// fails.
	code, out, errOut = importFrom(strings.Replace(export, `"counts":{"user":1}`, `"counts":{"user":1},"sha256":"00"`, 1))
	if code == 0 || !strings.Contains(out, "checksum: MISMATCH") || !strings.Contains(errOut, "changed after export") {
		t.Errorf("a wrong sum: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// --with-consent without --with-agents is a usage error.
	var stdout, stderr strings.Builder
	code = run(t.Context(), []string{"import", "--data-dir", dataDir, "--with-consent", "-"}, &environment{
		stdin: strings.NewReader(export), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
	})
	if code == 0 || !strings.Contains(stderr.String(), "--with-agents") {
		t.Errorf("--with-consent alone: exit %d, stderr %q", code, stderr.String())
	}
}
