package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// stream is `go test -json` output of a package with a passing test, a
// skipped one, and a failing test with a passing and a failing subtest, and
// of a package that did not build.
const stream = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"    a_test.go:5: quiet log of a passing test\n"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestSkip"}
{"Action":"output","Package":"ex/a","Test":"TestSkip","Output":"    a_test.go:9: no PostgreSQL: set CAIRN_TEST_DATABASE_URL\n"}
{"Action":"output","Package":"ex/a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestBad"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"run","Package":"ex/a","Test":"TestBad/fine"}
{"Action":"output","Package":"ex/a","Test":"TestBad/fine","Output":"    --- PASS: TestBad/fine (0.00s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestBad/fine","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestBad/broken"}
{"Action":"output","Package":"ex/a","Test":"TestBad/broken","Output":"    a_test.go:20: got 1, want 2\n"}
{"Action":"output","Package":"ex/a","Test":"TestBad/broken","Output":"    --- FAIL: TestBad/broken (0.00s)\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBad/broken","Elapsed":0}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBad","Elapsed":0}
{"Action":"output","Package":"ex/a","Output":"FAIL\n"}
{"Action":"output","Package":"ex/a","Output":"FAIL\tex/a\t0.01s\n"}
{"Action":"fail","Package":"ex/a","Elapsed":0.01}
{"ImportPath":"ex/b","Action":"build-output","Output":"b.go:3:1: syntax error\n"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b [build failed]\n"}
{"Action":"fail","Package":"ex/b","Elapsed":0}
{"Action":"output","Package":"ex/c","Output":"PASS\n"}
{"Action":"output","Package":"ex/c","Output":"ok  \tex/c\t0.02s\n"}
{"Action":"pass","Package":"ex/c","Elapsed":0.02}
`

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	failed, err := run(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a run with failures did not fail")
	}
	got := out.String()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	// Passed: TestOK, TestBad/fine. Failed: TestBad/broken, TestBad, and
	// ex/b, which failed without a test. Skipped: TestSkip.
	if last := lines[len(lines)-1]; last != "2 passed, 3 failed, 1 skipped" {
		t.Errorf("last line %q", last)
	}
	// Every skip is named with its reason, one line each.
	if !slices.Contains(lines, "  ex/a TestSkip: a_test.go:9: no PostgreSQL: set CAIRN_TEST_DATABASE_URL") {
		t.Errorf("the skip is not listed with its reason:\n%s", got)
	}
	for _, want := range []string{"a_test.go:20: got 1, want 2", "--- FAIL: TestBad (0.00s)", "FAIL\tex/a\t0.01s",
		"b.go:3:1: syntax error", "FAIL\tex/b [build failed]", "ok  \tex/c\t0.02s"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"quiet log of a passing test", "=== RUN", "--- SKIP", "PASS\n"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q, which plain go test does not print:\n%s", unwanted, got)
		}
	}
}

func TestSummaryAllPassed(t *testing.T) {
	var out bytes.Buffer
	in := `{"Action":"pass","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"p"}` + "\n"
	failed, err := run(strings.NewReader(in), &out)
	if err != nil || failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	if got := out.String(); got != "1 passed, 0 failed, 0 skipped\n" {
		t.Errorf("output %q", got)
	}
}

func TestSummaryListsSlowTests(t *testing.T) {
	var out bytes.Buffer
	var in strings.Builder
	// Twelve slow top-level tests, a slow subtest and a quick test: the ten
	// slowest top-level ones are listed, slowest first.
	for i := range 12 {
		fmt.Fprintf(&in, `{"Action":"pass","Package":"p","Test":"TestSlow%02d","Elapsed":%d}`+"\n", i, 10+i)
	}
	in.WriteString(`{"Action":"pass","Package":"p","Test":"TestSlow11/sub","Elapsed":99}` + "\n")
	in.WriteString(`{"Action":"pass","Package":"p","Test":"TestQuick","Elapsed":9.9}` + "\n")
	if _, err := run(strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{"slowest tests (10 s or more):"}
	for i := 11; i >= 2; i-- {
		want = append(want, fmt.Sprintf("  %6.1fs  p TestSlow%02d", float64(10+i), i))
	}
	want = append(want, "14 passed, 0 failed, 0 skipped")
	if !slices.Equal(lines, want) {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
