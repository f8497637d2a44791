package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairnkg/cairn/consent"
)

// ownerUserName is the name of the user created on first run.
const ownerUserName = "owner"

// bootstrapOwner creates the owner user, agent and key when the store has
// none. The key is CAIRN_OWNER_KEY when set (for automation), otherwise a
// fresh random one. It returns the key when it was created (so the caller
// shows it once) and "" when an owner already existed.
func bootstrapOwner(ctx context.Context, a *app, getenv func(string) string) (string, error) {
	key := getenv("CAIRN_OWNER_KEY")
	if key != "" {
		if err := consent.CheckKeyFormat(key); err != nil {
			return "", usageError{fmt.Sprintf("CAIRN_OWNER_KEY must be %d to %d printable characters without spaces", consent.MinKeyLen, consent.MaxKeyLen)}
		}
	} else {
		var err error
		if key, err = consent.NewKey(); err != nil {
			return "", err
		}
	}
	b, err := a.control.EnsureOwner(ctx, ownerUserName, consent.HashKey(key), consent.DisplayPrefix(key))
	if err != nil {
		return "", fmt.Errorf("first-run set-up: %w", err)
	}
	if !b.Created {
		return "", nil
	}
	a.log.Info("first run: created the owner user, agent and API key", "user", b.User.Name, "agent", b.Agent.Name, "key_id", b.KeyID)
	return key, nil
}

// printWelcome shows the owner key, once, with the MCP URL and client
// configurations ready to paste.
func printWelcome(w io.Writer, key, mcpURL string, store appConfig, fromEnv bool) {
	exe, err := os.Executable()
	if err != nil {
		exe = "cairn"
	}
	exe, goRun := stdioLauncher(exe, os.Getenv)
	writeWelcome(w, key, mcpURL, store, fromEnv, exe, goRun)
}

// writeWelcome is printWelcome with the program the stdio configuration
// launches given, and whether it stands in for a go run build.
func writeWelcome(w io.Writer, key, mcpURL string, store appConfig, fromEnv bool, exe string, goRun bool) {
	stdioNote := ""
	if goRun {
		stdioNote = "\nThis is a go run build, which is deleted when it exits, so the configuration\n" +
			"launches the installed binary: run  go install ./cmd/cairn  first.\n"
	}
	stdioCfg := map[string]any{"mcpServers": map[string]any{"cairn": stdioServer(exe, store)}}
	httpCfg := map[string]any{"mcpServers": map[string]any{"cairn": map[string]any{
		"url": mcpURL, "headers": map[string]string{"Authorization": "Bearer " + key},
	}}}
	remoteCfg := map[string]any{"mcpServers": map[string]any{"cairn": map[string]any{
		"command": "npx", "args": []string{"-y", "mcp-remote", mcpURL, "--header", "Authorization: Bearer " + key},
	}}}
	keyLine := "This is the owner API key. It is shown only now; Cairn keeps only its hash:\n\n    " + key
	if fromEnv {
		keyLine = "The owner API key is the one CAIRN_OWNER_KEY supplied; Cairn keeps only its hash."
	}
	consoleLine := ""
	if base, ok := strings.CutSuffix(mcpURL, "/mcp"); ok {
		consoleLine = "\nWeb console: " + base + "/console/  (sign in with the key)"
	}
	fmt.Fprintf(w, `
Cairn is set up. %s

MCP endpoint (Streamable HTTP): %s
Authenticate with the header  Authorization: Bearer <key>  (or X-API-Key: <key>).%s

Claude Desktop or Cursor over stdio (runs as the owner; no key needed):%s
%s

Cursor (or any client that speaks Streamable HTTP) over HTTP:
%s

Claude Desktop over HTTP, through mcp-remote:
%s

`, keyLine, mcpURL, consoleLine, stdioNote, indentJSON(stdioCfg), indentJSON(httpCfg), indentJSON(remoteCfg))
}

func indentJSON(v any) string {
	b, _ := json.MarshalIndent(v, "    ", "  ")
	return "    " + strings.TrimSpace(string(b))
}
