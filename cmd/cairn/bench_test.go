package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
)

// TestBenchSmall runs cairn bench at a small size on each backend, as CI
// can afford, and checks that its JSON parses and reports every phase with
// the calls the workload makes. The figures themselves are not checked:
// performance lives in what the command prints, not in assertions.
func TestBenchSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		tmp := t.TempDir()
		cmd := exec.Command(cairnBinary(t), "bench", "--entities", "120", "--memories", "15", "--queries", "4", "--batch", "50", "--json")
		cmd.Env = append(append(os.Environ(), env...), "TMPDIR="+tmp)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("cairn bench: %v\n%s", err, stderr.String())
		}
		var r benchReport
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("bench JSON: %v\n%s", err, stdout.String())
		}
		want := map[string][2]int{ // calls, items
			"store": {3, 120}, "create_relationships": {3, 119}, "create_relationships, REFERS_TO": {3, 120},
			"lookup by identifier": {4, 4}, "snapshot read": {4, 4},
			"traverse 1 hop": {4, 4}, "traverse 2 hops": {4, 4}, "traverse 3 hops": {4, 4},
			"save_memory": {15, 15}, "search_memory": {4, 4}, "search_memory, tag filter": {4, 4},
			"get_user_context": {4, 4}, "get_user_context, topic": {4, 4}, "no-op (ping)": {20, 20},
		}
		for _, p := range r.Phases {
			w, ok := want[p.Name]
			if !ok {
				t.Errorf("unexpected phase %q", p.Name)
				continue
			}
			delete(want, p.Name)
			if p.Calls != w[0] || p.Items != w[1] {
				t.Errorf("%s: %d calls, %d items; want %d, %d", p.Name, p.Calls, p.Items, w[0], w[1])
			}
			if p.P50ms <= 0 || p.P50ms > p.P95ms || p.P95ms > p.P99ms || p.ItemsPerSec <= 0 {
				t.Errorf("%s: figures out of order: %+v", p.Name, p)
			}
		}
		for name := range want {
			t.Errorf("phase %q missing", name)
		}
		if r.Workload.Entities != 120 || r.Workload.Seed != 1 || r.Embedder == "" || r.Store == "" {
			t.Errorf("report header %+v", r)
		}
		// The scratch store is gone: nothing left in the temporary
		// directory the run used.
		if left, _ := filepath.Glob(filepath.Join(tmp, "cairn-bench-*")); len(left) != 0 {
			t.Errorf("cairn bench left %v behind", left)
		}
	})
}

// TestBenchCPUProfile: --cpuprofile writes a profile go tool pprof reads
// (gzip-compressed protocol buffers), and a path it cannot create fails
// the run with the flag named, before any work.
func TestBenchCPUProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmp := t.TempDir()
	prof := filepath.Join(tmp, "cpu.prof")
	bench := func(path string) (string, error) {
		cmd := exec.Command(cairnBinary(t), "bench", "--entities", "2", "--memories", "1", "--queries", "1", "--cpuprofile", path)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := bench(prof); err != nil {
		t.Fatalf("cairn bench --cpuprofile: %v\n%s", err, out)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the profile (%d bytes) is not gzip-compressed, as pprof writes it", len(b))
	}
	out, err := bench(filepath.Join(tmp, "missing", "cpu.prof"))
	if err == nil || !strings.Contains(out, "--cpuprofile:") || strings.Contains(out, "phase") {
		t.Errorf("an unwritable profile path: %v\n%s", err, out)
	}
}

// TestBenchNeo4jScratch checks what cairn bench does with the Neo4j
// database of the split deployment, which it cannot create: it empties the
// database it was given when it ends, keeps it with --keep, and refuses a
// database that holds data rather than clear someone's graph.
func TestBenchNeo4jScratch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := neo4jtest.Take(t)
	env := append(append(os.Environ(), "CAIRN_DATABASE_URL="+pgtest.URL(t)), srv.Env()...)
	bench := func(args ...string) (string, error) {
		cmd := exec.Command(cairnBinary(t), append([]string{"bench", "--entities", "20", "--memories", "2", "--queries", "1"}, args...)...)
		cmd.Env = append(env, "TMPDIR="+t.TempDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	holds := func() bool {
		t.Helper()
		h, err := graphneo4j.HoldsData(t.Context(), srv.Driver, srv.Config.Database)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	if out, err := bench(); err != nil {
		t.Fatalf("cairn bench: %v\n%s", err, out)
	}
	if holds() {
		t.Error("cairn bench left data in its Neo4j database")
	}
	out, err := bench("--keep")
	if err != nil {
		t.Fatalf("cairn bench --keep: %v\n%s", err, out)
	}
	if m := regexp.MustCompile(`kept the scratch database (cairn_bench_[0-9]+)`).FindStringSubmatch(out); m != nil {
		pgtest.DropWhenDone(t, m[1])
	} else {
		t.Errorf("cairn bench --keep does not name the PostgreSQL database it kept:\n%s", out)
	}
	if !holds() || !strings.Contains(out, "kept the graph in Neo4j") {
		t.Errorf("cairn bench --keep: the graph was not kept, or the output does not say so:\n%s", out)
	}
	out, err = bench()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(out, "holds data") {
		t.Errorf("cairn bench on a database with data: %v\n%s\nwant exit %d saying it holds data", err, out, exitUsage)
	}
	if !holds() {
		t.Error("cairn bench cleared a database it refused")
	}
}
