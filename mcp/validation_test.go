package mcp_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/mcp"
)

// placeholder returns a value of a property's type that passes validation.
func placeholder(s *jsonschema.Schema) any {
	typ := s.Type
	for _, t := range s.Types {
		if t != "null" {
			typ = t
		}
	}
	switch typ {
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return true
	case "array":
		// As many items as the array needs (delete_memory's memory_ids
		// needs one), so that a valid base call reaches the argument each
		// case breaks.
		out := []any{}
		for s.MinItems != nil && len(out) < *s.MinItems {
			out = append(out, placeholder(s.Items))
		}
		return out
	case "object":
		// Fill nested required properties, so that a valid base call
		// reaches the argument each case breaks.
		m := map[string]any{}
		for _, name := range s.Required {
			m[name] = placeholder(s.Properties[name])
		}
		return m
	default:
		if len(s.Enum) > 0 {
			return s.Enum[0]
		}
		return "x"
	}
}

// wrongValue returns a value of another JSON type than the property's.
func wrongValue(s *jsonschema.Schema) any {
	switch placeholder(s).(type) {
	case string:
		return 42
	case bool:
		return "yes"
	case []any:
		return map[string]any{"not": "an array"}
	case map[string]any:
		return 5
	default:
		return "not a number"
	}
}

// TestMalformedInputToEveryTool sends every tool arguments that are wrong in
// each way a client can get them wrong, and expects VALIDATION_ERROR naming
// the argument every time: never a crash, never another code.
func TestMalformedInputToEveryTool(t *testing.T) {
	e := newEnv(t)
	huge := strings.Repeat("x", 10<<20)
	sentHuge := false
	for _, tool := range e.server.Tools() {
		in := tool.InputSchema()
		base := map[string]any{}
		for _, name := range in.Required {
			base[name] = placeholder(in.Properties[name])
		}
		with := func(name string, v any) map[string]any {
			m := maps.Clone(base)
			m[name] = v
			return m
		}
		without := func(name string) map[string]any {
			m := maps.Clone(base)
			delete(m, name)
			return m
		}
		type tc struct {
			name      string
			args      json.RawMessage
			wantField string
		}
		raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
		cases := []tc{
			{"arguments not an object", json.RawMessage(`[1, 2]`), ""},
			{"arguments not JSON", json.RawMessage(`{"a": `), ""},
			{"unknown argument", raw(with("no_such_argument", 1)), "no_such_argument"},
		}
		for _, name := range in.Required {
			cases = append(cases, tc{"missing " + name, raw(without(name)), name})
		}
		for _, name := range slices.Sorted(maps.Keys(in.Properties)) {
			p := in.Properties[name]
			if p.Type == "" && len(p.Types) == 0 {
				continue // accepts any JSON value
			}
			cases = append(cases, tc{"wrong type for " + name, raw(with(name, wrongValue(p))), name})
			if _, isString := placeholder(p).(string); !isString {
				continue
			}
			// Every string field is bounded: one character over its limit
			// is refused. One field of one tool, and any field without a
			// limit, also gets the full 10 MB: every tool decodes its
			// arguments on the same path, and 10 MB for each field (then
			// for each tool) made this the suite's slowest test under
			// -race without proving more.
			if p.MaxLength != nil && *p.MaxLength < len(huge) {
				cases = append(cases, tc{"over-long string in " + name, raw(with(name, huge[:*p.MaxLength+1])), name})
			}
			if !sentHuge || p.MaxLength == nil {
				cases = append(cases, tc{"10 MB string in " + name, raw(with(name, huge)), name})
				sentHuge = true
			}
		}
		for _, c := range cases {
			t.Run(tool.Name()+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				out, merr := e.server.Invoke(t.Context(), e.owner, tool.Name(), c.args)
				if merr == nil {
					t.Fatalf("accepted: %.200s", out)
				}
				if merr.Body.Code != mcp.CodeValidation || merr.Status != http.StatusBadRequest {
					t.Fatalf("code = %s (%d), want VALIDATION_ERROR (400): %s", merr.Body.Code, merr.Status, merr.Body.Message)
				}
				if merr.Body.TraceID == "" {
					t.Error("no trace_id")
				}
				if got, _ := merr.Body.Details["field"].(string); got != c.wantField {
					t.Errorf("details.field = %q, want %q (message %q)", got, c.wantField, merr.Body.Message)
				}
				if c.wantField != "" && merr.Body.Details["expected"] == nil {
					t.Errorf("details.expected missing: %+v", merr.Body.Details)
				}
				if len(merr.Body.Message) > 600 {
					t.Errorf("message is %d bytes; it must not echo the input", len(merr.Body.Message))
				}
			})
		}
	}
}

// TestUnknownIDs checks that tools taking an entity id answer
// ENTITY_NOT_FOUND for one that does not exist.
func TestUnknownIDs(t *testing.T) {
	e := newEnv(t)
	missing := "ent_000000000000000000000000"
	tests := []struct {
		tool string
		args map[string]any
		code string
	}{
		{"retrieve_entity_snapshot", map[string]any{"entity_id": missing}, mcp.CodeEntityNotFound},
		{"list_observations", map[string]any{"entity_id": missing}, mcp.CodeEntityNotFound},
		{"retrieve_field_provenance", map[string]any{"entity_id": missing, "field": "name"}, mcp.CodeEntityNotFound},
		{"correct", map[string]any{"entity_id": missing, "entity_type": "company", "field": "name", "value": "x"}, mcp.CodeEntityNotFound},
		{"merge_entities", map[string]any{"from_entity_id": missing, "to_entity_id": "ent_1"}, mcp.CodeEntityNotFound},
		{"store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "x"}}, "user_id": "someone-else"}, mcp.CodeValidation},
		// Files are stored since issue 15; content that is not base64 is
		// still refused.
		{"store", map[string]any{"file_content": "not base64!", "mime_type": "text/plain"}, mcp.CodeValidation},
		{"no_such_tool", map[string]any{}, mcp.CodeUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			_, merr := e.call(t, tt.tool, tt.args)
			if merr == nil || merr.Body.Code != tt.code {
				t.Fatalf("err = %v, want %s", merr, tt.code)
			}
		})
	}
}

// TestErrorsThroughAnMCPClient checks that a real client sees tool errors as
// IsError results carrying the envelope.
func TestErrorsThroughAnMCPClient(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t)
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "retrieve_entities", Arguments: map[string]any{"limit": "ten"}})
	if err != nil {
		t.Fatal(err)
	}
	env := envelopeOf(t, res)
	if env.Error.Code != mcp.CodeValidation || env.Error.Details["field"] != "limit" || env.Error.Details["expected"] != "integer" {
		t.Errorf("envelope = %+v, want VALIDATION_ERROR on limit expecting integer", env.Error)
	}
	res, err = cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "retrieve_entities", Arguments: map[string]any{"limit": 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if env := envelopeOf(t, res); env.Error.Code != mcp.CodeValidation || env.Error.Details["field"] != "limit" {
		t.Errorf("limit above the maximum: envelope = %+v", env.Error)
	}
}
