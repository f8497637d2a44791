package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// wireSchema returns s as the JSON that tools/list sends: every subschema an
// object. jsonschema-go writes the empty schema (what it infers for a field
// of type any) as the boolean schema true, which JSON Schema allows but the
// official TypeScript SDK client (Claude Desktop, Claude Code, Cursor, VS
// Code) refuses inside properties: one such property made every tool
// invisible to those hosts. Booleans stay only under additionalProperties
// and unevaluatedProperties, where every client accepts them. Key order is
// kept, so properties stay in the order of the struct fields.
func wireSchema(s *jsonschema.Schema) (json.RawMessage, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out, _, err := rewriteSchema(raw)
	return out, err
}

// booleanSubschemas lists the paths of the subschemas of a JSON schema that
// are booleans where clients need objects.
func booleanSubschemas(raw json.RawMessage) ([]string, error) {
	_, found, err := rewriteSchema(raw)
	return found, err
}

// rewriteSchema copies a JSON schema token by token, writing each boolean
// subschema in object form (true as {}, false as {"not": {}}) and reporting
// where it found them.
func rewriteSchema(raw []byte) (json.RawMessage, []string, error) {
	w := schemaWriter{dec: json.NewDecoder(bytes.NewReader(raw))}
	w.dec.UseNumber()
	if err := w.value(roleSchema, "$"); err != nil {
		return nil, nil, fmt.Errorf("mcp: rewrite schema: %w", err)
	}
	return w.out.Bytes(), w.found, nil
}

// schemaRole is what a JSON value is within a schema.
type schemaRole int

const (
	roleValue      schemaRole = iota // not a schema (an enum, a default…): copied as is
	roleSchema                       // a schema
	roleSchemaMap                    // an object whose values are schemas (properties)
	roleSchemaList                   // an array of schemas (anyOf), or a schema (items)
	roleSchemaBool                   // a schema that may stay boolean (additionalProperties)
)

// keywordRole is the role of the value of a keyword of a schema object.
func keywordRole(keyword string) schemaRole {
	switch keyword {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return roleSchemaMap
	case "anyOf", "allOf", "oneOf", "prefixItems", "items", "additionalItems":
		return roleSchemaList
	case "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems":
		return roleSchema
	case "additionalProperties", "unevaluatedProperties":
		return roleSchemaBool
	}
	return roleValue
}

type schemaWriter struct {
	dec   *json.Decoder
	out   bytes.Buffer
	found []string
}

func (w *schemaWriter) value(role schemaRole, path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return w.array(role, path)
		}
		return w.object(role, path)
	case bool:
		if role == roleSchema || role == roleSchemaList {
			w.found = append(w.found, path)
			if tok {
				w.out.WriteString("{}")
			} else {
				w.out.WriteString(`{"not":{}}`)
			}
			return nil
		}
	}
	b, err := json.Marshal(tok)
	if err != nil {
		return err
	}
	w.out.Write(b)
	return nil
}

func (w *schemaWriter) object(role schemaRole, path string) error {
	w.out.WriteByte('{')
	for i := 0; w.dec.More(); i++ {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if i > 0 {
			w.out.WriteByte(',')
		}
		b, _ := json.Marshal(key)
		w.out.Write(b)
		w.out.WriteByte(':')
		child := roleValue
		switch role {
		case roleSchema, roleSchemaList, roleSchemaBool:
			child = keywordRole(key)
		case roleSchemaMap:
			child = roleSchema
		}
		if err := w.value(child, path+"."+key); err != nil {
			return err
		}
	}
	return w.close('}')
}

func (w *schemaWriter) array(role schemaRole, path string) error {
	w.out.WriteByte('[')
	child := roleValue
	if role == roleSchemaList {
		child = roleSchema
	}
	for i := 0; w.dec.More(); i++ {
		if i > 0 {
			w.out.WriteByte(',')
		}
		if err := w.value(child, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return w.close(']')
}

func (w *schemaWriter) close(d json.Delim) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return io.ErrUnexpectedEOF
	}
	w.out.WriteByte(byte(d))
	return nil
}

// leanInput returns a copy of an input schema without what a model does not
// need to call the tool well and the server checks anyway; every byte of it
// is in the model's context on every turn, in every tool:
//   - string lengths (maxLength): guards against runaway or hostile clients
//     (DefaultStringLimit on every string, 256 on ids, 64 on times), not
//     guidance; a longer string is refused with a VALIDATION_ERROR naming
//     the limit. Counts (maxItems) stay: they say how much one call carries.
//   - null in the types of optional arguments: leaving an argument out means
//     what null would, so the model is told the one type to send.
//   - additionalProperties: false: an unknown argument is refused with a
//     VALIDATION_ERROR naming it. additionalProperties: true stays, since it
//     says that an object takes fields of the caller's choosing.
//   - the common arguments (addCommonArgs), explained once in the server's
//     instructions rather than in every tool: max_response_bytes is left
//     out (every tool accepts it) and cursor keeps only its type.
//
// Validation keeps using the schema itself (Tool.InputSchema).
func leanInput(s *jsonschema.Schema) *jsonschema.Schema {
	s = s.CloneSchemas()
	delete(s.Properties, argMaxResponseBytes)
	if c := s.Properties[argCursor]; c != nil {
		c.Description = ""
	}
	for sub := range allSchemas(s) {
		sub.MaxLength = nil
		if i := slices.Index(sub.Types, "null"); i >= 0 && len(sub.Types) > 1 {
			sub.Types = slices.Delete(slices.Clone(sub.Types), i, i+1)
			if len(sub.Types) == 1 {
				sub.Type, sub.Types = sub.Types[0], nil
			}
		}
		if isFalseSchema(sub.AdditionalProperties) {
			sub.AdditionalProperties = nil
		}
	}
	return s
}

// compactOutput returns the output schema that clients receive: an object,
// and nothing more. The full schema (Tool.OutputSchema, with every property,
// nested objects and descriptions) is what the golden files pin and what the
// tests check every result against; sent in tools/list it made up 60% of the
// bytes (56 of 95 KB for 28 tools), and even its top-level properties with
// their types a quarter of the 25 KB a host can afford, for information that
// the model hardly ever receives (the Anthropic and OpenAI tool formats
// carry a name, a description and an input schema only) and that it learns
// from the result itself. It only loosens the full schema, so structured
// content still validates where clients check it, as the official
// TypeScript SDK does.
func compactOutput(*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object"}
}

// isFalseSchema reports whether s is the schema nothing matches ({"not":
// {}}, which jsonschema-go writes as false).
func isFalseSchema(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}

// allSchemas yields s and every schema below it.
func allSchemas(s *jsonschema.Schema) iter.Seq[*jsonschema.Schema] {
	return func(yield func(*jsonschema.Schema) bool) {
		var walk func(*jsonschema.Schema) bool
		walk = func(s *jsonschema.Schema) bool {
			if s == nil {
				return true
			}
			if !yield(s) {
				return false
			}
			for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
				if !walk(s.Properties[name]) {
					return false
				}
			}
			for _, sub := range slices.Concat([]*jsonschema.Schema{s.Items, s.AdditionalProperties, s.Not}, s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems) {
				if !walk(sub) {
					return false
				}
			}
			return true
		}
		walk(s)
	}
}
