package transfer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// The lines of an export from format version 2 on name every field in
// snake_case, whatever the Go type behind it: a struct field is written
// under its json tag's name when it has one, else under its Go name in
// snake_case (ID → id, CanonicalName → canonical_name, EntityIDs →
// entity_ids, IsOwner → is_owner), embedded structs' fields inline, so
// that the format is the documented one and not an accident of the Go
// code. Values that encode themselves (time.Time, json.Number) and the
// keys of maps (user data: snapshot fields, metadata) are left as they
// are. Version 1 files, written with encoding/json's Go names, are read
// with encoding/json.

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// snakeName is a Go field name in snake_case. Initialisms are one word
// (ID, IDs, URL, SHA256, JSON), and a word starts at an upper-case letter
// after a lower-case one or a digit, or at the last upper-case letter of a
// run followed by a lower-case one (HTTPServer → http_server).
func snakeName(name string) string {
	for _, ini := range [][2]string{{"IDs", "Ids"}, {"ID", "Id"}, {"URL", "Url"}, {"JSON", "Json"}, {"SHA", "Sha"}} {
		name = strings.ReplaceAll(name, ini[0], ini[1])
	}
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// field is a struct field as a line names it.
type field struct {
	index     []int
	name      string
	omitEmpty bool
}

// fieldsOf returns the fields of a struct type as lines name them,
// embedded structs' inline, in declaration order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct) {
			continue
		}
		name, opts, tagged := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && !tagged {
			continue
		}
		if name == "" {
			name = snakeName(f.Name)
		}
		out = append(out, field{index: f.Index, name: name, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

// marshalSnake encodes v as a line's data with snake_case field names.
func marshalSnake(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeSnake(&b, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeSnake(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	if v.Type().Implements(marshalerType) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeLeaf(b, v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeSnake(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for _, f := range fieldsOf(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && fv.IsZero() || f.omitEmpty && (fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice) && fv.Len() == 0 {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(f.name)
			b.Write(key)
			b.WriteByte(':')
			if err := encodeSnake(b, fv); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return encodeLeaf(b, v)
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k.String())
			b.Write(key)
			b.WriteByte(':')
			if err := encodeSnake(b, v.MapIndex(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return encodeLeaf(b, v) // bytes: base64, as encoding/json
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeSnake(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	return encodeLeaf(b, v)
}

// encodeLeaf writes what encoding/json writes for v (without escaping
// HTML, as encoding/json's Marshal does escape it: kept, so that version 2
// changes the names and nothing else).
func encodeLeaf(b *bytes.Buffer, v reflect.Value) error {
	out, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}

// unmarshalSnake decodes a line's data written by marshalSnake into v, a
// pointer; numbers in untyped values stay exact (json.Number), as decode
// keeps them.
func unmarshalSnake(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("transfer: decode into %T", v)
	}
	return decodeSnake(data, rv.Elem())
}

func decodeSnake(data []byte, v reflect.Value) error {
	data = bytes.TrimSpace(data)
	if reflect.PointerTo(v.Type()).Implements(unmarshalerType) || v.Kind() == reflect.Interface {
		return decodeLeaf(data, v)
	}
	if string(data) == "null" {
		v.SetZero()
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeSnake(data, v.Elem())
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		for _, f := range fieldsOf(v.Type()) {
			raw, ok := obj[f.name]
			if !ok {
				continue
			}
			if err := decodeSnake(raw, v.FieldByIndex(f.index)); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return decodeLeaf(data, v)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, raw := range obj {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := decodeSnake(raw, e); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
		return nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return decodeLeaf(data, v)
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(data, &arr); err != nil {
			return err
		}
		s := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, raw := range arr {
			if err := decodeSnake(raw, s.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		v.Set(s)
		return nil
	}
	return decodeLeaf(data, v)
}

// decodeLeaf decodes data into v with encoding/json, numbers kept exact.
func decodeLeaf(data []byte, v reflect.Value) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v.Addr().Interface())
}
