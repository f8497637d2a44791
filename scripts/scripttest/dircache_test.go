package scripttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// dircache runs a function of scripts/dircache.sh with the cache in cache.
func dircache(t *testing.T, cache string, args ...string) error {
	t.Helper()
	lib, err := filepath.Abs(filepath.Join("..", "dircache.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{"-c", `set -euo pipefail; . "$0"; "$@"`, lib}, args...)...)
	cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR="+cache)
	out, err := cmd.CombinedOutput()
	if len(out) > 0 {
		t.Logf("%v: %s", args, out)
	}
	return err
}

func mkfile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// TestDirCacheAfterAKill checks what scripts/dircache.sh does with what a
// run killed in the middle of a copy (kill -9) leaves: a half-made entry
// is never taken for an entry and is removed once it is an hour old (a
// younger one may be a run still copying); a half-made copy in the clone
// is removed by the next restore. Saving keeps one entry per group, and
// other groups' entries alone.
func TestDirCacheAfterAKill(t *testing.T) {
	tmp := t.TempDir()
	cache := filepath.Join(tmp, "cache")
	kind := filepath.Join(cache, "npm")
	src := filepath.Join(tmp, "src")
	mkfile(t, filepath.Join(src, "pkg", "index.js"), "new")

	mkfile(t, filepath.Join(kind, "grp-old", "pkg", "index.js"), "old")
	mkfile(t, filepath.Join(kind, "other-k", "pkg", "index.js"), "other")
	mkfile(t, filepath.Join(kind, "grp-k1.tmp.111", "pkg", "index.js"), "half, killed long ago")
	mkfile(t, filepath.Join(kind, "grp-k1.tmp.222", "pkg", "index.js"), "half, still copying")
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(kind, "grp-k1.tmp.111"), long, long); err != nil {
		t.Fatal(err)
	}

	dest := filepath.Join(tmp, "clone", "node_modules")
	mkfile(t, filepath.Join(dest, "pkg", "index.js"), "installed before")
	mkfile(t, filepath.Join(tmp, "clone", "node_modules.cairn-tmp.333", "pkg", "index.js"), "half a restore")

	// The half-made entry of k1 is not an entry.
	if err := dircache(t, cache, "dircache_restore", "npm", "grp", "k1", dest); err == nil {
		t.Fatal("restore of k1 before it was saved succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "pkg", "index.js")); string(b) != "installed before" {
		t.Errorf("a failed restore changed the destination: %q", b)
	}

	if err := dircache(t, cache, "dircache_save", "npm", "grp", "k1", src); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, kind), []string{"grp-k1", "grp-k1.tmp.222", "other-k"}; !slices.Equal(got, want) {
		t.Errorf("cache after the save holds %q, want %q", got, want)
	}

	if err := dircache(t, cache, "dircache_restore", "npm", "grp", "k1", dest); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "pkg", "index.js")); string(b) != "new" {
		t.Errorf("restored %q, want the saved copy", b)
	}
	if got, want := names(t, filepath.Join(tmp, "clone")), []string{"node_modules"}; !slices.Equal(got, want) {
		t.Errorf("clone after the restore holds %q, want %q", got, want)
	}
}
