package jsoncodec

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oracle decodes s as Decode does with encoding/json alone: what Map and
// StringMap must give, errors included.
func oracle[V any](s string) (map[string]V, error) {
	m := map[string]V{}
	if s == "" || s == "{}" {
		return m, nil
	}
	if err := Decode(s, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// sameAsOracle fails t unless Map and StringMap give for s exactly what
// encoding/json gives.
func sameAsOracle(t *testing.T, s string) {
	t.Helper()
	check := func(name string, got, want any, gotErr, wantErr error) {
		t.Helper()
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s(%q): error %v, encoding/json's %v", name, s, gotErr, wantErr)
		}
		if gotErr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s(%q) differs from encoding/json (-want +got):\n%s", name, s, diff)
			}
		}
	}
	got, gotErr := Map(s)
	want, wantErr := oracle[any](s)
	check("Map", got, want, gotErr, wantErr)
	gotS, gotErr := StringMap(s)
	wantS, wantErr := oracle[string](s)
	check("StringMap", gotS, wantS, gotErr, wantErr)
}

var seeds = []string{
	``, `{}`, ` {} `, `{"a":1}`, `{"a":"b"}`, `{"a":null}`, `null`, `[]`, `"x"`, `1`,
	`{"company":"Acme Rockets","n":42,"name":"Quill 004216","nested":{"a":[1,2.5,"x"],"b":null,"c":true},"title":"pilot"}`,
	`{"a":1,"a":2}`, `{"a":"x","a":{"b":1}}`,
	`{"big":123456789012345678901234567890,"neg":-0,"exp":1e400,"small":-1.5E-7}`,
	`{"esc":"\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00"}`, `{"lone":"\ud800"}`, `{"bad":"\x"}`,
	`{"é":"café","ключ":"значение"}`, "{\"a\":\"\xff\"}", "{\"\xfe\":1}",
	`{"a":1} {"b":2}`, `{"a":1} x`, `{"a":1}` + "\n", `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`,
	`{"a":[1,2,[3,[4]]],"b":{"c":{"d":{}}}}`, `{"t":true,"f":false}`, `{"x":01}`, `{"x":1.}`, `{"x":.5}`,
	`{"x":"` + strings.Repeat("w", 5000) + `"}`,
}

// TestMapMatchesEncodingJSON checks the seeds and 3,000 random objects of
// every kind of value against encoding/json.
func TestMapMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		sameAsOracle(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		sameAsOracle(t, randomObject(r, 0))
	}
}

// FuzzMapMatchesEncodingJSON looks for text on which Map or StringMap
// differ from encoding/json.
func FuzzMapMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameAsOracle(t, s) })
}

// randomObject is the JSON text of a random object: keys and strings with
// escapes, non-ASCII and invalid bytes, numbers of every notation, nested
// arrays and objects, repeated keys.
func randomObject(r *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	n := r.IntN(6)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(randomString(r))
		b.WriteByte(':')
		b.WriteString(randomValue(r, depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func randomValue(r *rand.Rand, depth int) string {
	kinds := 9
	if depth > 3 {
		kinds = 6
	}
	switch r.IntN(kinds) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[r.IntN(2)]
	case 2, 3:
		return randomString(r)
	case 4, 5:
		return []string{"0", "-0", "42", "-7", "3.25", "1e3", "-2.5E-4", "123456789012345678901234", "0.1", "1E+2"}[r.IntN(10)]
	case 6, 7:
		parts := make([]string, r.IntN(4))
		for i := range parts {
			parts[i] = randomValue(r, depth+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		return randomObject(r, depth)
	}
}

func randomString(r *rand.Rand) string {
	pieces := []string{"a", "name", "Quill", " ", "é", "€", "😀", `\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\/`, "\xff", "k", "1", "_"}
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(5) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	b.WriteByte('"')
	return b.String()
}

// BenchmarkMap decodes a snapshot like those the side-by-side benchmark
// stores; the encoding/json line is the decoder Map replaced.
func BenchmarkMap(b *testing.B) {
	snap := `{"company":"Acme Rockets","detail":"company detail 42","email":"quill004216@example.com","n":42,` +
		`"name":"Quill 004216","notes":"met in Lyon in 1994, raven project","tax_id":"FR-1234-5678","title":"pilot"}`
	b.Run("Map", func(b *testing.B) {
		for b.Loop() {
			if _, err := Map(snap); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := oracle[any](snap); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ExampleMap shows that numbers come back exact.
func ExampleMap() {
	m, _ := Map(`{"n":12345678901234567890,"s":"x"}`)
	fmt.Printf("%T %v\n", m["n"], m["n"])
	// Output: json.Number 12345678901234567890
}

var _ json.Number // numbers are json.Number, as Decode gives them
