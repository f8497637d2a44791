package scripttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npmCI runs scripts/npm-ci.sh on dir from root, with the cache in cache,
// and returns what it said.
func npmCI(t *testing.T, root, dir, cache string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "npm-ci.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, dir, "npm-ci-test")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR="+cache)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm-ci.sh %s: %v\n%s", dir, err, out.String())
	}
	return out.String()
}

// writePackage writes a package.json and a package-lock.json without
// dependencies (npm ci needs no network for it) of the given version.
func writePackage(t *testing.T, dir, version string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := `{"name": "cairn-npm-ci-test", "version": "` + version + `", "private": true}` + "\n"
	lock := `{"name": "cairn-npm-ci-test", "version": "` + version + `", "lockfileVersion": 3, "requires": true,
  "packages": {"": {"name": "cairn-npm-ci-test", "version": "` + version + `"}}}` + "\n"
	for name, body := range map[string]string{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256([]byte(lock))
	return hex.EncodeToString(sum[:])
}

// TestNPMCIInstallsOnceAMachine checks scripts/npm-ci.sh as the provisioning
// scripts use it: a first clone installs with npm ci and leaves a copy in
// the machine's cache; a second clone (another directory, the same
// lockfile) copies it; a clone already installed does nothing; a new
// lockfile installs again and replaces the old copy.
func TestNPMCIInstallsOnceAMachine(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npm is not installed (CI=true: the provisioning scripts need it)")
		}
		t.Skip("npm is not installed")
	}
	tmp := t.TempDir()
	cache := filepath.Join(tmp, "cache")
	first, second := filepath.Join(tmp, "clone1"), filepath.Join(tmp, "clone2")
	const dir = "web/app"
	want := writePackage(t, filepath.Join(first, dir), "1.0.0")
	writePackage(t, filepath.Join(second, dir), "1.0.0")

	stamp := func(root string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, dir, "node_modules", ".cairn-lock.sha256"))
		if err != nil {
			t.Fatalf("stamp of %s: %v", root, err)
		}
		return strings.TrimSpace(string(b))
	}
	entries := func() []string {
		t.Helper()
		es, err := os.ReadDir(filepath.Join(cache, "npm"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	if out := npmCI(t, first, dir, cache); !strings.Contains(out, "installing "+dir) {
		t.Errorf("first clone: %q, want an npm ci", out)
	}
	if got := stamp(first); got != want {
		t.Errorf("first clone's stamp %q, want the lockfile's hash %q", got, want)
	}
	if es := entries(); len(es) != 1 || !strings.HasPrefix(es[0], "web_app-"+want+"-node") {
		t.Fatalf("cache holds %q, want one entry for web/app and its lockfile", es)
	}

	if out := npmCI(t, second, dir, cache); !strings.Contains(out, "copied from the cache") {
		t.Errorf("second clone: %q, want a copy from the cache", out)
	}
	if got := stamp(second); got != want {
		t.Errorf("second clone's stamp %q, want %q", got, want)
	}
	if out := npmCI(t, second, dir, cache); out != "" {
		t.Errorf("installed clone: %q, want nothing done", out)
	}

	newer := writePackage(t, filepath.Join(second, dir), "1.0.1")
	if out := npmCI(t, second, dir, cache); !strings.Contains(out, "installing "+dir) {
		t.Errorf("new lockfile: %q, want an npm ci", out)
	}
	if got := stamp(second); got != newer {
		t.Errorf("stamp after the new lockfile %q, want %q", got, newer)
	}
	if es := entries(); len(es) != 1 || !strings.HasPrefix(es[0], "web_app-"+newer+"-node") {
		t.Errorf("cache holds %q, want only the new lockfile's entry", es)
	}
}
