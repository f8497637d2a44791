package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestToolSchemasAreObjects fails when any tool's input or output schema
// has a boolean where the official TypeScript SDK client needs an object
// schema: that client then refuses tools/list and the host shows no tools.
func TestToolSchemasAreObjects(t *testing.T) {
	for _, tool := range AllTools(Deps{}) {
		for kind, s := range map[string]any{"input": tool.Def.InputSchema, "output": tool.Def.OutputSchema} {
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("%s %s schema: %v", tool.Name(), kind, err)
			}
			bad, err := booleanSubschemas(raw)
			if err != nil {
				t.Fatalf("%s %s schema: %v", tool.Name(), kind, err)
			}
			if len(bad) > 0 {
				t.Errorf("%s %s schema has boolean subschemas at %v; clients need {} there", tool.Name(), kind, bad)
			}
		}
	}
}

func TestWireSchema(t *testing.T) {
	type in struct {
		Value   any            `json:"value"`
		List    []any          `json:"list"`
		Fields  map[string]any `json:"fields"`
		Flag    bool           `json:"flag,omitempty"`
		Choices []string       `json:"choices,omitempty"`
	}
	s, err := jsonschema.For[in](nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Properties["flag"].Default = json.RawMessage("true")
	s.Properties["choices"].Items.Enum = []any{true, false}
	s.Properties["list"].AnyOf = []*jsonschema.Schema{{}, {Not: &jsonschema.Schema{}}}
	raw, _ := json.Marshal(s)
	if bad, _ := booleanSubschemas(raw); len(bad) != 4 {
		t.Fatalf("booleanSubschemas of the inferred schema = %v, want value, list.items and list.anyOf[0..1]", bad)
	}
	wire, err := wireSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","required":["value","list","fields"],"properties":{` +
		`"value":{},` +
		`"list":{"type":["null","array"],"items":{},"anyOf":[{},{"not":{}}]},` +
		`"fields":{"type":"object","additionalProperties":true},` +
		`"flag":{"type":"boolean","default":true},` +
		`"choices":{"type":["null","array"],"items":{"type":"string","enum":[true,false]}}},` +
		`"additionalProperties":false}`
	var got, exp any
	_ = json.Unmarshal(wire, &got)
	_ = json.Unmarshal([]byte(want), &exp)
	gb, _ := json.Marshal(got)
	eb, _ := json.Marshal(exp)
	if string(gb) != string(eb) {
		t.Errorf("wireSchema =\n%s\nwant\n%s", wire, want)
	}
	if bad, _ := booleanSubschemas(wire); len(bad) != 0 {
		t.Errorf("wire schema still has boolean subschemas at %v", bad)
	}
}
