package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// stdioLauncher returns the program a stdio client configuration should
// launch, given this process's executable: the executable itself, unless it
// is a `go run` build, which the go command deletes when the process exits.
// Then it returns where `go install ./cmd/cairn` puts the binary, and
// goRun true, so that the configuration printed stays valid once the
// person has installed it.
func stdioLauncher(exe string, getenv func(string) string) (path string, goRun bool) {
	if !isGoRunBuild(exe) {
		return exe, false
	}
	return installedCairn(getenv), true
}

// buildDir matches the package directories of a go build's work directory
// (b001, b002, …).
var buildDir = regexp.MustCompile(`^b[0-9]+$`)

// isGoRunBuild reports whether exe is a binary `go run` built: go run links
// it as $WORK/b001/exe/<name>, where $WORK is a go-build* directory under
// GOTMPDIR or the system's temporary directory, removed when go run exits.
// (go test's binaries live in $WORK/b001/ directly, and are not this.)
func isGoRunBuild(exe string) bool {
	exeDir := filepath.Dir(exe)
	pkgDir := filepath.Dir(exeDir)
	work := filepath.Dir(pkgDir)
	return filepath.Base(exeDir) == "exe" && buildDir.MatchString(filepath.Base(pkgDir)) &&
		strings.HasPrefix(filepath.Base(work), "go-build")
}

// installedCairn is where `go install ./cmd/cairn` puts the binary, found
// as the go command finds it but without running it: GOBIN, else the bin
// directory of GOPATH's first entry, else $HOME/go/bin. GOBIN and GOPATH are
// read from the environment, then from the go command's environment file
// (what `go env -w` writes).
func installedCairn(getenv func(string) string) string {
	file := goEnvFile(getenv)
	goenv := func(key string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return file[key]
	}
	name := "cairn"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if bin := goenv("GOBIN"); bin != "" {
		return filepath.Join(bin, name)
	}
	if list := filepath.SplitList(goenv("GOPATH")); len(list) > 0 && list[0] != "" {
		return filepath.Join(list[0], "bin", name)
	}
	home := getenv("HOME")
	if runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, "go", "bin", name)
}

// goEnvFile reads the go command's environment file: GOENV names it, "off"
// means none, and by default it is go/env in the user's configuration
// directory. A file that cannot be read counts as empty.
func goEnvFile(getenv func(string) string) map[string]string {
	path := getenv("GOENV")
	if path == "off" {
		return nil
	}
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil
		}
		path = filepath.Join(dir, "go", "env")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && key != "" && !strings.HasPrefix(key, "#") {
			vars[key] = strings.Trim(value, `"'`)
		}
	}
	return vars
}
