package cypher

import (
	"strings"
	"testing"
)

func TestLabel(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "one word", in: "company", want: "Company"},
		{name: "snake case", in: "bank_account", want: "BankAccount"},
		{name: "digit after underscore keeps it", in: "tax_2024", want: "Tax_2024"},
		{name: "digits inside", in: "form1099_b", want: "Form1099B"},
		{name: "double underscore", in: "a__b", want: "A_B"},
		{name: "trailing underscore", in: "ab_", want: "Ab_"},
		{name: "63 bytes", in: "a" + strings.Repeat("b", 62), want: "A" + strings.Repeat("b", 62)},
		{name: "64 bytes", in: "a" + strings.Repeat("b", 63), wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "upper case", in: "Company", wantErr: true},
		{name: "leading digit", in: "1company", wantErr: true},
		{name: "leading underscore", in: "_company", wantErr: true},
		{name: "injection", in: "company) DETACH DELETE (n", wantErr: true},
		{name: "backtick", in: "company`", wantErr: true},
		{name: "space", in: "bank account", wantErr: true},
		{name: "unicode", in: "companyé", wantErr: true},
		{name: "reserved Entity", in: "entity", wantErr: true},
		{name: "reserved Source", in: "source", wantErr: true},
		{name: "reserved TimelineEvent", in: "timeline_event", wantErr: true},
		{name: "reserved UserLock", in: "user_lock", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Label(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Label(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Label(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestLabelIsInjective checks that two type names never share a label, over
// every name of up to four characters from a small alphabet that covers the
// cases (letters, a digit, underscores).
func TestLabelIsInjective(t *testing.T) {
	alphabet := []byte("ab1_")
	seen := map[string]string{}
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		if len(prefix) > 0 {
			name := string(prefix)
			if label, err := Label(name); err == nil {
				if other, dup := seen[label]; dup {
					t.Fatalf("Label(%q) = Label(%q) = %s", name, other, label)
				}
				seen[label] = name
			}
		}
		if len(prefix) == 4 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
	if len(seen) < 50 {
		t.Fatalf("only %d names checked", len(seen))
	}
}

func TestRelType(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  bool
	}{
		{name: "built in", in: "PART_OF"},
		{name: "registered", in: "EMPLOYED_BY"},
		{name: "digits", in: "V2_OF"},
		{name: "64 bytes", in: "A" + strings.Repeat("B", 63)},
		{name: "65 bytes", in: "A" + strings.Repeat("B", 64), wantErr: true},
		{name: "lower case", in: "part_of", wantErr: true},
		{name: "leading underscore", in: "_PART_OF", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "injection", in: "PART_OF]->(x) DETACH DELETE x //", wantErr: true},
		{name: "backtick", in: "PART`OF", wantErr: true},
		{name: "union", in: "PART_OF|DEPENDS_ON", wantErr: true},
		{name: "reserved PRODUCED", in: "PRODUCED", wantErr: true},
		{name: "reserved OBSERVES", in: "OBSERVES", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RelType(tt.in)
			if tt.wantErr != (err != nil) {
				t.Fatalf("RelType(%q) = %q, %v; want error %v", tt.in, got, err, tt.wantErr)
			}
			if err == nil && got != tt.in {
				t.Fatalf("RelType(%q) = %q", tt.in, got)
			}
		})
	}
}
