// Package jsoncodec is how graph drivers store maps (snapshots, fields,
// metadata, provenance) as JSON text and read them back with numbers kept
// exact (json.Number), as every graph driver must return them.
package jsoncodec

import (
	"encoding/json"
	"fmt"
	"strings"

	fastjson "github.com/segmentio/encoding/json"
)

// Encode returns v as JSON text.
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("graph: encode: %w", err)
	}
	return string(b), nil
}

// Decode decodes s into v keeping numbers exact (json.Number).
func Decode(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("graph: decode: %w", err)
	}
	return nil
}

// Map and StringMap skip the decoder for the empty object, which most
// relationships' metadata and provenance are: a traversal reads thousands
// of them.
func Map(s string) (map[string]any, error) { return decodeObject[any](s) }

// StringMap decodes a JSON object of strings; see Map.
func StringMap(s string) (map[string]string, error) { return decodeObject[string](s) }

// decodeObject decodes a JSON object as Decode does, with
// github.com/segmentio/encoding/json, which builds the same maps as
// encoding/json in half its time: reading snapshots is most of what a
// context load with a topic spends outside the database
// (docs/performance.md). Text it refuses goes to Decode, so that the
// error is encoding/json's too; the answers are the same
// (TestMapMatchesEncodingJSON, FuzzMapMatchesEncodingJSON).
func decodeObject[V any](s string) (map[string]V, error) {
	m := map[string]V{}
	if s == "" || s == "{}" {
		return m, nil
	}
	if _, err := fastjson.Parse([]byte(s), &m, fastjson.UseNumber); err == nil {
		return m, nil
	}
	m = map[string]V{}
	if err := Decode(s, &m); err != nil {
		return nil, err
	}
	return m, nil
}
