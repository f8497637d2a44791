package mcp_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
)

// env is a Cairn wired on a fresh embedded store, with its owner.
type env struct {
	server  *mcp.Server
	control *controlplane.Store
	owner   consent.Principal
	key     string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := graph.NewStore(embedded.New(db))
	t.Cleanup(func() {
		g.Close()
		db.Close()
	})
	control := controlplane.New(db.Write, migrations.SQLite)
	key, err := consent.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control.EnsureOwner(t.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key)); err != nil {
		t.Fatal(err)
	}
	owner, err := control.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: knowledge.NewService(g, knowledge.NewRegistry(), knowledge.Options{})}, mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{server: srv, control: control, owner: owner, key: key}
}

// call invokes a tool through the dispatch path every transport uses.
func (e *env) call(t *testing.T, tool string, args any) (map[string]any, *mcp.Error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, merr := e.server.Invoke(t.Context(), e.owner, tool, raw)
	if merr != nil {
		return nil, merr
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s returned invalid JSON: %v", tool, err)
	}
	return m, nil
}

// mustCall is call that fails the test on a tool error.
func (e *env) mustCall(t *testing.T, tool string, args any) map[string]any {
	t.Helper()
	out, merr := e.call(t, tool, args)
	if merr != nil {
		t.Fatalf("%s: %v", tool, merr)
	}
	return out
}

// connect returns an MCP client session on the server over in-memory
// transports, as the owner.
func (e *env) connect(t *testing.T) *mcpsdk.ClientSession {
	t.Helper()
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := e.server.MCPServer(mcp.FixedPrincipal(e.owner)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// envelopeOf decodes the error envelope of a failed tool result.
func envelopeOf(t *testing.T, res *mcpsdk.CallToolResult) mcp.Envelope {
	t.Helper()
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("result is not a tool error: %+v", res)
	}
	text, ok := res.Content[0].(*mcpsdk.TextContent)
	if !ok {
		t.Fatalf("error content is %T, want text", res.Content[0])
	}
	var env mcp.Envelope
	dec := json.NewDecoder(strings.NewReader(text.Text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("error text is not the envelope: %v\n%s", err, text.Text)
	}
	return env
}
