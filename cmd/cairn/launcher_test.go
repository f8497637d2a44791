package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStdioLauncher checks which program the printed stdio configuration
// launches: the running binary, unless it is a go run build, which is gone
// once go run exits; then the binary go install puts where the go command
// would.
func TestStdioLauncher(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("paths below are Unix paths")
	}
	envFile := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(envFile, []byte("GOBIN=/opt/gobin\nGOPROXY=off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const goRunExe = "/tmp/go-build3866045831/b001/exe/cairn"
	tests := []struct {
		name      string
		exe       string
		env       map[string]string
		want      string
		wantGoRun bool
	}{
		{"Installed", "/usr/local/bin/cairn", nil, "/usr/local/bin/cairn", false},
		{"Built", "/home/ada/src/cairn/cairn", nil, "/home/ada/src/cairn/cairn", false},
		{"GoTestBinary", "/tmp/go-build1/b001/cairn.test", nil, "/tmp/go-build1/b001/cairn.test", false},
		{"ExeDirElsewhere", "/home/ada/b001/exe/cairn", nil, "/home/ada/b001/exe/cairn", false},
		{"GoRunDefault", goRunExe, map[string]string{"HOME": "/home/ada"}, "/home/ada/go/bin/cairn", true},
		{"GoRunGOTMPDIR", "/var/cache/gotmp/go-build77/b001/exe/cairn", map[string]string{"HOME": "/home/ada"}, "/home/ada/go/bin/cairn", true},
		{"GoRunGOPATH", goRunExe, map[string]string{"HOME": "/home/ada", "GOPATH": "/srv/go" + string(filepath.ListSeparator) + "/srv/other"}, "/srv/go/bin/cairn", true},
		{"GoRunGOBIN", goRunExe, map[string]string{"HOME": "/home/ada", "GOPATH": "/srv/go", "GOBIN": "/opt/bin"}, "/opt/bin/cairn", true},
		{"GoRunEnvFile", goRunExe, map[string]string{"HOME": "/home/ada", "GOPATH": "/srv/go", "GOENV": envFile}, "/opt/gobin/cairn", true},
		{"GoRunEnvOverFile", goRunExe, map[string]string{"HOME": "/home/ada", "GOBIN": "/opt/bin", "GOENV": envFile}, "/opt/bin/cairn", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"GOENV": "off"}
			for k, v := range tt.env {
				env[k] = v
			}
			got, goRun := stdioLauncher(tt.exe, func(k string) string { return env[k] })
			if got != tt.want || goRun != tt.wantGoRun {
				t.Errorf("stdioLauncher(%q) = %q, %v; want %q, %v", tt.exe, got, goRun, tt.want, tt.wantGoRun)
			}
		})
	}
}

// TestWelcomeUnderGoRun checks the welcome of a go run build: the stdio
// configuration launches the installed binary, is still JSON, and comes
// with the line that says to install it first.
func TestWelcomeUnderGoRun(t *testing.T) {
	var out strings.Builder
	writeWelcome(&out, "cairn_sk_test", "http://127.0.0.1:7400/mcp", appConfig{dataDir: "/srv/cairn-data"}, false, "/home/ada/go/bin/cairn", true)
	text := out.String()
	stdio := text[strings.Index(text, "over stdio"):strings.Index(text, "Cursor (or any")]
	if !strings.Contains(stdio, "go install ./cmd/cairn") {
		t.Errorf("the welcome of a go run build does not say to run go install:\n%s", stdio)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(stdio[strings.Index(stdio, "{"):]), &cfg); err != nil {
		t.Fatalf("stdio configuration is not JSON: %v\n%s", err, stdio)
	}
	if got := cfg.MCPServers["cairn"].Command; got != "/home/ada/go/bin/cairn" {
		t.Errorf("stdio configuration launches %q, want the installed binary", got)
	}

	out.Reset()
	writeWelcome(&out, "cairn_sk_test", "http://127.0.0.1:7400/mcp", appConfig{dataDir: "/srv/cairn-data"}, false, "/usr/local/bin/cairn", false)
	if strings.Contains(out.String(), "go install") {
		t.Errorf("the welcome of an installed binary says to run go install:\n%s", out.String())
	}
}

// TestWelcomeNamesTheConsole checks that the welcome of serve says where
// the web console is, and that a welcome without an HTTP endpoint (cairn
// import's) does not make one up.
func TestWelcomeNamesTheConsole(t *testing.T) {
	var out strings.Builder
	writeWelcome(&out, "cairn_sk_test", "http://127.0.0.1:7400/mcp", appConfig{dataDir: "/srv/cairn-data"}, false, "/usr/local/bin/cairn", false)
	if !strings.Contains(out.String(), "Web console: http://127.0.0.1:7400/console/") {
		t.Errorf("the welcome of serve does not name the console:\n%s", out.String())
	}
	out.Reset()
	writeWelcome(&out, "cairn_sk_test", "http://127.0.0.1:7400/mcp (when you run cairn serve)", appConfig{dataDir: "/srv/cairn-data"}, false, "/usr/local/bin/cairn", false)
	if strings.Contains(out.String(), "Web console") {
		t.Errorf("a welcome without a served endpoint names a console:\n%s", out.String())
	}
}
