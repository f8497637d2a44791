package graph_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairnkg/cairn/graph"
)

// runWords returns every word a caller could look for in text: each
// substring of at least three bytes, on rune boundaries, of a run of
// letters and digits of its lower case.
func runWords(text string) []string {
	var out []string
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		for i := range w {
			for j := i + 1; j <= len(w); j++ {
				if j-i >= 3 && utf8.RuneStart(w[i]) && (j == len(w) || utf8.RuneStart(w[j])) {
					out = append(out, w[i:j])
				}
			}
		}
	}
	return out
}

// sigText is the text a TextSig summarises, as a caller builds it from the
// entity it reads: type, name and the top-level scalars' text, joined by
// separators that are neither letters nor digits.
func sigText(e graph.Entity) string {
	parts := []string{strings.ReplaceAll(e.Type, "_", " "), e.CanonicalName}
	for _, v := range e.Snapshot {
		switch v := v.(type) {
		case string:
			parts = append(parts, v)
		case json.Number:
			parts = append(parts, v.String())
		}
	}
	return strings.Join(parts, "; ")
}

func TestTextSig(t *testing.T) {
	e := graph.Entity{Type: "space_probe", CanonicalName: "Voyager Deux", Snapshot: map[string]any{
		"mission": "Flyby of JUPITER", "launched": json.Number("1977"), "crew": nil, "nested": map[string]any{"deep": "orbit"},
		"note": "Zoë café, ΑΘΗΝΑ", "ok": true,
	}}
	sig := graph.EntityTextSig(e)
	for _, w := range runWords(sigText(e)) {
		if !sig.MayContain(w) {
			t.Errorf("MayContain(%q) = false; the text holds it", w)
		}
	}
	// Numbers may be given back in another notation: any trigram with a
	// digit may be there.
	for _, w := range []string{"000", "1e21", "a19"} {
		if !sig.MayContain(w) {
			t.Errorf("MayContain(%q) = false with a number in the snapshot", w)
		}
	}
	// What the filter must answer no to, which a 512-bit filter of this
	// text does (a false yes here would only make the test fragile, not
	// the screen wrong: the words were checked against this signature).
	for _, w := range []string{"rocket", "launch", "orbit", "deep", "qqq", "zzzz"} {
		if sig.MayContain(w) {
			t.Errorf("MayContain(%q) = true; the text does not hold it", w)
		}
	}
	if !sig.MayContainAny([]string{"rocket", "jupiter"}) || sig.MayContainAny([]string{"rocket", "qqq"}) {
		t.Error("MayContainAny is not MayContain of any word")
	}
	// Bytes that are not UTF-8 join the runs they separate, as a caller
	// that drops them (strings.ToValidUTF8) sees them.
	if !graph.EntityTextSig(graph.Entity{CanonicalName: "ΣΑΣ\xffΣΑΣ"}).MayContain("σασσ") {
		t.Error("MayContain(\"σασσ\") = false for \"ΣΑΣ\\xffΣΑΣ\"")
	}
	// Words it cannot decide on.
	for _, w := range []string{"ro", "fly by", "fly-by", "\xff\xfeab"} {
		if !sig.MayContain(w) {
			t.Errorf("MayContain(%q) = false; it cannot tell", w)
		}
	}
	for _, s := range []graph.TextSig{nil, {}, append(graph.TextSig{9}, sig[1:]...)} {
		if !s.MayContain("rocket") {
			t.Errorf("%v.MayContain = false; an unknown signature says nothing", s)
		}
	}
	// A value whose text it cannot foresee gives a signature that says
	// nothing, and is not nil (which a driver stores as "none yet").
	if s := graph.EntityTextSig(graph.Entity{Snapshot: map[string]any{"tags": []string{"rocket"}}}); s == nil || !s.MayContain("qqq") {
		t.Errorf("signature %v of a snapshot with a []string; want one that says nothing", s)
	}
}

// FuzzTextSig checks that a signature never says no to a word of the text
// it was made from, whatever the text, and when the text's number comes
// back in another notation.
func FuzzTextSig(f *testing.F) {
	f.Add("person", "Ada Lovelace", "Rocket <launch> & co", "1e21")
	f.Add("space_probe", "İstanbul KELVIN", "Zoë Café straße", "-0.000012")
	f.Add("note", "x\xffy abc\xfe", "ǅemal ﬁle ΣΑΣ", "12345678901234567890")
	f.Fuzz(func(t *testing.T, typ, name, value, number string) {
		var n json.Number
		if err := json.Unmarshal([]byte(number), &n); err != nil {
			number = "0" // drivers write valid numbers only
		}
		e := graph.Entity{Type: typ, CanonicalName: name, Snapshot: map[string]any{"v": value, "n": json.Number(number)}}
		sig := graph.EntityTextSig(e)
		// As a backend gives it back: strings exact (invalid UTF-8 as
		// U+FFFD, as JSON does), the number possibly rewritten.
		back := graph.Entity{Type: typ, CanonicalName: name, Snapshot: map[string]any{
			"v": strings.ToValidUTF8(value, "\uFFFD"), "n": json.Number("1000000000000000000000")}}
		for _, read := range []graph.Entity{e, back} {
			for _, w := range runWords(sigText(read)) {
				if !sig.MayContain(w) {
					t.Fatalf("MayContain(%q) = false; the text %q holds it", w, sigText(read))
				}
			}
		}
	})
}

// BenchmarkEntityTextSig: what computing a signature adds to each entity a
// driver writes (a person with three fields, as the store benchmarks
// write).
func BenchmarkEntityTextSig(b *testing.B) {
	e := graph.Entity{Type: "person", CanonicalName: "Person 004216", Snapshot: map[string]any{
		"name": "Person 004216", "email": "person004216@example.com", "city": "City 42"}}
	for b.Loop() {
		graph.EntityTextSig(e)
	}
}
