package mcp_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/mcp"
)

// outputSchemas caches, per tool, the resolved full output schema and the
// one tools/list sends.
var outputSchemas sync.Map // *mcp.Tool → [2]*jsonschema.Resolved

// checkOutput fails the test unless a tool's result is valid against both
// its full output schema and the compact one clients receive. Clients check
// only the compact one (the official TypeScript SDK validates structured
// content against it), so every call in these tests checks the full one.
func checkOutput(t testing.TB, srv *mcp.Server, name string, out json.RawMessage) {
	t.Helper()
	var tool *mcp.Tool
	for _, c := range srv.Tools() {
		if c.Name() == name {
			tool = c
		}
	}
	if tool == nil {
		return // an unknown tool answers an error, never a result
	}
	schemas, ok := outputSchemas.Load(tool)
	if !ok {
		var wire jsonschema.Schema
		raw, err := json.Marshal(tool.Def().OutputSchema)
		if err == nil {
			err = json.Unmarshal(raw, &wire)
		}
		if err != nil {
			t.Fatalf("%s: output schema on the wire: %v", name, err)
		}
		var pair [2]*jsonschema.Resolved
		for i, s := range []*jsonschema.Schema{tool.OutputSchema(), &wire} {
			if pair[i], err = s.Resolve(nil); err != nil {
				t.Fatalf("%s: output schema: %v", name, err)
			}
		}
		schemas, _ = outputSchemas.LoadOrStore(tool, pair)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s returned invalid JSON: %v", name, err)
	}
	for i, s := range schemas.([2]*jsonschema.Resolved) {
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: the result does not match its %s output schema: %v\n%s", name, [2]string{"full", "wire"}[i], err, out)
		}
	}
}
