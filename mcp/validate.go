package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
)

// decodeArgs parses tool arguments and checks them against the tool's input
// schema. Unlike a generic validator, every failure names the argument by
// its path ("entities[2].entity_type") and says what type was expected, so
// that an agent can fix its call. Numbers stay exact (json.Number).
func decodeArgs(raw json.RawMessage, schema *jsonschema.Schema) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &knowledge.ValidationError{Expected: "a JSON object of arguments", Got: "malformed JSON", Message: "arguments are not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &knowledge.ValidationError{Expected: "a single JSON object", Got: "trailing data", Message: "arguments have trailing data"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &knowledge.ValidationError{Expected: "object", Got: jsonKind(v), Message: "arguments must be a JSON object, got " + jsonKind(v)}
	}
	if err := validateValue("", obj, schema); err != nil {
		return nil, err
	}
	return obj, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return true
	}
	f, ok := new(big.Float).SetString(string(n))
	return ok && f.IsInt()
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func fieldErr(path, expected, got, format string, args ...any) error {
	return &knowledge.ValidationError{Field: path, Expected: expected, Got: got, Message: fmt.Sprintf(format, args...)}
}

func childPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// validateValue checks v against the subset of JSON Schema our tool schemas
// use: type(s), enum, numeric bounds, string length, object properties,
// required and additionalProperties, and array items and length.
func validateValue(path string, v any, s *jsonschema.Schema) error {
	if s == nil {
		return nil
	}
	got := jsonKind(v)
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return typeMatches(t, got) }) {
		want := strings.Join(slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" }), " or ")
		return fieldErr(path, want, got, "expected %s, got %s", want, got)
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		opts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			opts[i] = fmt.Sprint(e)
		}
		want := "one of: " + strings.Join(opts, ", ")
		return fieldErr(path, want, got, "expected %s, got %s", want, truncatedValue(v))
	}
	switch v := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		if s.Minimum != nil && f < *s.Minimum {
			return fieldErr(path, fmt.Sprintf("a number ≥ %v", *s.Minimum), got, "must be at least %v, got %s", *s.Minimum, v)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fieldErr(path, fmt.Sprintf("a number ≤ %v", *s.Maximum), got, "must be at most %v, got %s", *s.Maximum, v)
		}
	case string:
		if s.MaxLength != nil && (len(v) > 4**s.MaxLength || utf8.RuneCountInString(v) > *s.MaxLength) {
			return fieldErr(path, fmt.Sprintf("a string of at most %d characters", *s.MaxLength), "string",
				"is %d bytes long; the limit is %d characters", len(v), *s.MaxLength)
		}
		if s.MinLength != nil && utf8.RuneCountInString(v) < *s.MinLength {
			return fieldErr(path, fmt.Sprintf("a string of at least %d characters", *s.MinLength), "string", "must not be empty")
		}
	case []any:
		if s.MaxItems != nil && len(v) > *s.MaxItems {
			return fieldErr(path, fmt.Sprintf("an array of at most %d items", *s.MaxItems), "array", "has %d items; the limit is %d", len(v), *s.MaxItems)
		}
		if s.MinItems != nil && len(v) < *s.MinItems {
			return fieldErr(path, fmt.Sprintf("an array of at least %d items", *s.MinItems), "array", "has %d items; at least %d are needed", len(v), *s.MinItems)
		}
		for i, item := range v {
			if err := validateValue(fmt.Sprintf("%s[%d]", path, i), item, s.Items); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				want := "a value"
				if p := s.Properties[name]; p != nil {
					want = schemaTypeText(p)
				}
				return fieldErr(childPath(path, name), want, "missing", "is required")
			}
		}
		for _, name := range slices.Sorted(maps.Keys(v)) {
			sub, known := s.Properties[name]
			if !known {
				if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
					allowed := slices.Sorted(maps.Keys(s.Properties))
					return fieldErr(childPath(path, name), "one of: "+strings.Join(allowed, ", "), "unknown argument",
						"is not an argument of this tool (known: %s)", strings.Join(allowed, ", "))
				}
				sub = s.AdditionalProperties
			}
			if err := validateValue(childPath(path, name), v[name], sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaTypeText describes a property schema's type for a message.
func schemaTypeText(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	t := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(t) == 0 {
		return "a value"
	}
	return strings.Join(t, " or ")
}

func truncatedValue(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
