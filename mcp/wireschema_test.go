package mcp

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestToolSchemasAreObjects fails when any tool's input or output schema
// has a boolean where the official TypeScript SDK client needs an object
// schema: that client then refuses tools/list and the host shows no tools.
func TestToolSchemasAreObjects(t *testing.T) {
	for _, tool := range AllTools(Deps{}) {
		for kind, s := range map[string]any{"input": tool.Def().InputSchema, "output": tool.Def().OutputSchema} {
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

// TestLeanInput checks what the wire form of an input schema leaves out, and
// that it leaves the schema the server validates against untouched.
func TestLeanInput(t *testing.T) {
	type window struct {
		Start *string `json:"start,omitempty" jsonschema:"ISO 8601"`
	}
	type in struct {
		ID     string         `json:"id" jsonschema:"an id"`
		Tags   []string       `json:"tags,omitempty"`
		Fields map[string]any `json:"fields,omitempty"`
		Window *window        `json:"window,omitempty"`
	}
	s, err := jsonschema.For[in](nil)
	if err != nil {
		t.Fatal(err)
	}
	maxLen(prop(s, "id"), idLimit)
	n := 8
	prop(s, "tags").MaxItems = &n
	limitStrings(s)
	addCommonArgs(s, BudgetList, true)
	before, _ := json.Marshal(s)

	wire, err := wireSchema(leanInput(s))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","required":["id"],"properties":{` +
		`"id":{"type":"string","description":"an id"},` +
		`"tags":{"type":"array","items":{"type":"string"},"maxItems":8},` +
		`"fields":{"type":"object","additionalProperties":true},` +
		`"window":{"type":"object","properties":{"start":{"type":"string","description":"ISO 8601"}}},` +
		`"cursor":{"type":"string"}}}`
	var got, exp any
	_ = json.Unmarshal(wire, &got)
	_ = json.Unmarshal([]byte(want), &exp)
	gb, _ := json.Marshal(got)
	eb, _ := json.Marshal(exp)
	if string(gb) != string(eb) {
		t.Errorf("leanInput =\n%s\nwant\n%s", gb, eb)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Errorf("leanInput changed the schema the server validates against:\n%s\nwas\n%s", after, before)
	}
}

// TestWireInputsNameEveryArgument checks, for every tool, that the input
// schema clients receive names every argument the server takes, at every
// depth, with the same required ones: only max_response_bytes, which the
// server's instructions explain, is left out.
func TestWireInputsNameEveryArgument(t *testing.T) {
	for _, tool := range AllTools(Deps{}) {
		raw, err := json.Marshal(tool.Def().InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var wire jsonschema.Schema
		if err := json.Unmarshal(raw, &wire); err != nil {
			t.Fatal(err)
		}
		enforced := tool.InputSchema().CloneSchemas()
		delete(enforced.Properties, argMaxResponseBytes)
		if got, want := argumentPaths(&wire, ""), argumentPaths(enforced, ""); !slices.Equal(got, want) {
			t.Errorf("%s: the wire schema names the arguments\n%v\nthe server takes\n%v", tool.Name(), got, want)
		}
	}
}

// argumentPaths lists the properties of s at every depth, sorted, with "*"
// marking the required ones.
func argumentPaths(s *jsonschema.Schema, prefix string) []string {
	var out []string
	var walk func(s *jsonschema.Schema, prefix string)
	walk = func(s *jsonschema.Schema, prefix string) {
		if s == nil {
			return
		}
		for name, p := range s.Properties {
			path := prefix + "." + name
			if slices.Contains(s.Required, name) {
				path += "*"
			}
			out = append(out, path)
			walk(p, path)
		}
		walk(s.Items, prefix+"[]")
	}
	walk(s, prefix)
	slices.Sort(out)
	return out
}
