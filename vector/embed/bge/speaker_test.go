package bge

import "testing"

func TestWithoutSpeaker(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Maya: I adopted a greyhound", "I adopted a greyhound"},
		{"  Dr. Okafor:   take two a day", "take two a day"},
		{"Mary Jane Watson: hi", "hi"},
		{"Zoë: ça va", "ça va"},
		{"User: prefers dark mode", "prefers dark mode"},
		{"O'Brien-Smith: yes", "yes"},
		// Kept as they are.
		{"person: Ada Lovelace; mathematician", "person: Ada Lovelace; mathematician"},
		{"Meeting at 10:30 with Tom", "Meeting at 10:30 with Tom"},
		{"10:30: standup", "10:30: standup"},
		{"Maya:", "Maya:"},
		{"Maya:   ", "Maya:   "},
		{"Maya:x", "Maya:x"},
		{"The Very Long Label Here: text", "The Very Long Label Here: text"},
		{"Maya and Tom: hi", "Maya and Tom: hi"},
		{"Maya, Tom: hi", "Maya, Tom: hi"},
		{"Abcdefghijklmnopqrstuvwxyzabcdefghijklmnop: text", "Abcdefghijklmnopqrstuvwxyzabcdefghijklmnop: text"},
		{": text", ": text"},
		{"", ""},
		{"Note this: it matters", "Note this: it matters"},
	} {
		if got := withoutSpeaker(c.in); got != c.want {
			t.Errorf("withoutSpeaker(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
