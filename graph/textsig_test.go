package graph_test

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairnkg/cairn/graph"
)

// runWords returns the words a caller could look for in text: each
// substring of at least three bytes, on rune boundaries, of a run of
// letters and digits of its lower case, when the run is at most
// maxRunWord bytes long. A longer run gives itself whole and each of its
// substrings of at most maxRunWord bytes: all of them would be quadratic
// in number and cubic to check, and a fuzzed run of a few kilobytes then
// takes seconds.
func runWords(text string) []string {
	var out []string
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if len(w) > maxRunWord {
			out = append(out, w)
		}
		for i := range w {
			for j := i + 1; j <= len(w) && j-i <= maxRunWord; j++ {
				if j-i >= 3 && utf8.RuneStart(w[i]) && (j == len(w) || utf8.RuneStart(w[j])) {
					out = append(out, w[i:j])
				}
			}
		}
	}
	return out
}

// maxRunWord bounds the substrings runWords gives of a run, in bytes.
const maxRunWord = 64

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
	// A run of 285 letters whose trigrams, but "aaa", all start past
	// its 247th byte: every part of a long run counts, not its start only.
	f.Add("note", "x", strings.Repeat("a", 250)+"thequickbrownfoxjumpsoverthelazydog", "0")
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

// TestTextHash: a signature holds the hash of the entity's text when that
// text has no number and is UTF-8, and a signature of version 1 (without
// it) still screens words.
func TestTextHash(t *testing.T) {
	e := graph.Entity{Type: "space_probe", CanonicalName: "Voyager", Snapshot: map[string]any{"mission": "Grand tour", "done": true}}
	h, ok := graph.EntityTextSig(e).TextHash()
	sum := sha256.Sum256([]byte("space probe: Voyager; Grand tour"))
	if !ok || h != hex.EncodeToString(sum[:]) {
		t.Errorf("TextHash = %s, %v; want the hash of the entity's text", h, ok)
	}
	for name, snap := range map[string]map[string]any{
		"not UTF-8":           {"note": "bad \xff byte"},
		"a huge exponent":     {"n": json.Number("1e99999999")},
		"not a number at all": {"n": json.Number("twelve")},
	} {
		if _, ok := graph.EntityTextSig(graph.Entity{Type: "probe", Snapshot: snap}).TextHash(); ok {
			t.Errorf("%s: the signature holds a text hash; the text may come back otherwise", name)
		}
	}
	// Numbers: the hash is that of the text in numberText's notation.
	e.Snapshot["launched"], e.Snapshot["mass"] = json.Number("1977"), 721.9
	h, ok = graph.EntityTextSig(e).TextHash()
	sum = sha256.Sum256([]byte("space probe: Voyager; 1977; 721.9; Grand tour"))
	if !ok || h != hex.EncodeToString(sum[:]) {
		t.Errorf("TextHash with numbers = %s, %v; want the hash of the entity's text", h, ok)
	}
	for _, s := range []graph.TextSig{nil, {0}, graph.EntityTextSig(graph.Entity{Snapshot: map[string]any{"x": []string{"y"}}})} {
		if _, ok := s.TextHash(); ok {
			t.Errorf("%v holds a text hash", s)
		}
	}
	// Version 1: version, flags, the 64 bytes of bits.
	v1 := append(graph.TextSig{1}, graph.EntityTextSig(e)[1:66]...)
	if v1.MayContain("rocket") || !v1.MayContain("voyager") {
		t.Error("a version 1 signature does not screen as it did")
	}
	if _, ok := v1.TextHash(); ok {
		t.Error("a version 1 signature holds a text hash")
	}
}

// TestEntityText: type, name and scalar values in key order, cut at
// MaxEntityText bytes without splitting a character.
func TestEntityText(t *testing.T) {
	e := graph.Entity{Type: "space_probe", CanonicalName: "Voyager 1", Snapshot: map[string]any{
		"z": "last", "a": "first", "n": json.Number("1977"), "f": 0.5, "b": true, "l": []any{"x"}, "m": map[string]any{}, "s": []string{"<y>"},
	}}
	if got, want := graph.EntityText(e), `space probe: Voyager 1; first; 0.5; 1977; ["<y>"]; last`; got != want {
		t.Errorf("EntityText = %q, want %q", got, want)
	}
	// One notation for a number's value, whichever it was written in.
	for _, c := range []struct {
		in   []any
		want string
	}{
		{[]any{json.Number("1e21"), json.Number("1000000000000000000000"), 1e21, json.Number("10E+20"), json.Number("0.1e22")}, "1e+21"},
		{[]any{json.Number("1.50"), json.Number("1.5"), 1.5, float32(1.5), json.Number("15e-1"), json.Number("0001.5000")}, "1.5"},
		{[]any{json.Number("120"), 120, uint8(120), json.Number("1.2e2"), 120.0, json.Number("120.000")}, "120"},
		{[]any{json.Number("-0"), json.Number("0.000"), 0, -0.0, json.Number("0e10")}, "0"},
		{[]any{json.Number("1e-7"), 1e-7, json.Number("0.0000001")}, "1e-7"},
		{[]any{json.Number("0.000001"), json.Number("1e-6")}, "0.000001"},
		{[]any{json.Number("-123456789012345678901"), json.Number("-1.23456789012345678901e20")}, "-123456789012345678901"},
		{[]any{json.Number("123456789012345678901234"), json.Number("1.23456789012345678901234E23")}, "1.23456789012345678901234e+23"},
	} {
		for _, v := range c.in {
			e := graph.Entity{Type: "n", Snapshot: map[string]any{"v": v}}
			if got := graph.EntityText(e); got != "n: ; "+c.want {
				t.Errorf("EntityText of %T %v = %q, want %q", v, v, got, "n: ; "+c.want)
			}
		}
	}
	e.Snapshot = map[string]any{"a": strings.Repeat("é", 200)}
	got := graph.EntityText(e)
	if len(got) > graph.MaxEntityText || !utf8.ValidString(got) || len(got) < graph.MaxEntityText-1 {
		t.Errorf("EntityText of a long value: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// FuzzNumberText: EntityText writes a JSON number in a notation of its
// own that has the number's value (ParseFloat reads the same float64 from
// both), that it writes again as it is, and that is the same for the
// number with its decimal point moved into its exponent.
func FuzzNumberText(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.50", "1e21", "12E-9", "123456789012345678901234", "0.000001", "-7.25e+3"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, shift int) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		if _, ok := v.(float64); !ok || len(s) > 200 {
			return
		}
		text := func(n string) string {
			return strings.TrimPrefix(graph.EntityText(graph.Entity{Type: "n", Snapshot: map[string]any{"v": json.Number(n)}}), "n: ; ")
		}
		got := text(strings.TrimSpace(s))
		want, err1 := strconv.ParseFloat(strings.TrimSpace(s), 64)
		back, err2 := strconv.ParseFloat(got, 64)
		if err1 == nil && (err2 != nil || back != want) {
			t.Fatalf("%q is written %q, which reads as %v (%v), not %v", s, got, back, err2, want)
		}
		if again := text(got); again != got {
			t.Fatalf("%q is written %q, and that is written %q", s, got, again)
		}
		// The same value with the point moved: m × 10^k as (m / 10^j) e(k+j).
		mant, exp, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "e")
		k, err := strconv.Atoi(cmp.Or(exp, "0"))
		if err != nil || k > 1000 || k < -1000 {
			return
		}
		neg := strings.HasPrefix(mant, "-")
		mant = strings.TrimPrefix(mant, "-")
		intPart, frac, _ := strings.Cut(mant, ".")
		j := max(0, min(shift%8, len(intPart)))
		moved := intPart[:len(intPart)-j]
		if moved == "" {
			moved = "0"
		}
		moved += "." + intPart[len(intPart)-j:] + frac
		if neg {
			moved = "-" + moved
		}
		moved += "e" + strconv.Itoa(k+j)
		if other := text(moved); other != got {
			t.Fatalf("%q is written %q, and %q (the same value) %q", s, got, moved, other)
		}
	})
}
