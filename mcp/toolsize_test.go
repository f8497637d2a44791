package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// TestToolsListSize measures the answer to tools/list as a client receives
// it from a server with the default toolsets (cairn serve and cairn stdio
// without --toolsets), and fails above mcp.MaxToolsListBytes: hosts put
// every tool definition into the model's context on every turn.
func TestToolsListSize(t *testing.T) {
	srv, err := mcp.NewServer(mcp.Deps{}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, tool := range mcp.AllTools(mcp.Deps{}) {
		if slices.Contains(mcp.DefaultToolsets, tool.Toolset) {
			want++
		}
	}
	if len(srv.Tools()) != want {
		t.Fatalf("the default server exposes %d tools, want the %d of the default toolsets", len(srv.Tools()), want)
	}
	wire := &wireLog{}
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.MCPServer(mcp.FixedPrincipal(consent.Principal{UserID: "u", Owner: true})).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// The client's side logs a message before the client sees it, so the
	// answer is in the log when ListTools returns.
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcpsdk.LoggingTransport{Transport: ct, Writer: wire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(srv.Tools()) || listed.NextCursor != "" {
		t.Fatalf("tools/list gave %d tools (next cursor %q), want all %d in one page", len(listed.Tools), listed.NextCursor, len(srv.Tools()))
	}

	answer := wire.message(t, `"tools":[`)
	var msg struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil {
		t.Fatal(err)
	}
	if got, want := len(msg.Result.Tools), mcp.DefinitionsBytes(srv.Tools()); got != want {
		t.Errorf("the tool definitions on the wire are %d bytes, DefinitionsBytes says %d", got, want)
	}
	for _, tool := range srv.Tools() {
		def, _ := json.Marshal(tool.Def())
		in, _ := json.Marshal(tool.Def().InputSchema)
		t.Logf("%-30s %5d bytes (input schema %4d, description %3d)", tool.Name(), len(def), len(in), len(tool.Def().Description))
	}
	t.Logf("tools/list: %d tools, %d bytes of definitions, %d bytes in all", len(srv.Tools()), len(msg.Result.Tools), len(answer))
	if len(answer) > mcp.MaxToolsListBytes {
		t.Errorf("tools/list is %d bytes, more than the %d a host can afford to put into the model's context on every turn: "+
			"shorten descriptions, or leave out of the wire schema what the server enforces anyway (mcp/wireschema.go)", len(answer), mcp.MaxToolsListBytes)
	}
}

// wireLog records the JSON-RPC messages a LoggingTransport logs.
type wireLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// message returns the one message the client read that contains marker.
func (w *wireLog) message(t *testing.T, marker string) []byte {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var found [][]byte
	sc := bufio.NewScanner(bytes.NewReader(w.buf.Bytes()))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "read: "); ok && strings.Contains(line, marker) {
			found = append(found, []byte(line))
		}
	}
	if len(found) != 1 {
		t.Fatalf("the client read %d messages with %s, want 1", len(found), marker)
	}
	return found[0]
}
