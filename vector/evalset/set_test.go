package evalset

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/conversations.json from Generate")

// TestCommittedSetIsGenerated checks that the committed set is what the
// generator makes, so that the set is reviewed as the material it comes
// from and never edited by hand.
func TestCommittedSetIsGenerated(t *testing.T) {
	b, err := json.MarshalIndent(Generate(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile("testdata/conversations.json", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(b, committed) && !*update {
		t.Fatal("testdata/conversations.json is not Generate's output: go test ./vector/evalset -run CommittedSet -update")
	}
}

// TestSetShape checks what issue 36 asks of the set.
func TestSetShape(t *testing.T) {
	s := Generate()
	turns, questions := 0, map[Kind]int{}
	for _, c := range s.Conversations {
		ids := map[string]bool{}
		sessions := map[int]bool{}
		for _, tr := range c.Turns {
			if ids[tr.ID] {
				t.Errorf("turn %s twice", tr.ID)
			}
			ids[tr.ID] = true
			sessions[tr.Session] = true
		}
		if len(sessions) < 2 {
			t.Errorf("%s has %d sessions", c.ID, len(sessions))
		}
		turns += len(c.Turns)
		for _, q := range c.Questions {
			questions[q.Kind]++
			want := 1
			if q.Kind == MultiHop {
				want = 2
			}
			if len(q.Answers) != want {
				t.Errorf("%s: %d answers, want %d", q.ID, len(q.Answers), want)
			}
			for _, a := range q.Answers {
				if !ids[a] {
					t.Errorf("%s: answer %q is no turn of %s", q.ID, a, c.ID)
				}
			}
		}
	}
	total := 0
	for _, k := range Kinds {
		if questions[k] == 0 {
			t.Errorf("no %s question", k)
		}
		total += questions[k]
	}
	if len(s.Conversations) < 5 || turns < 1000 || total < 300 {
		t.Errorf("%d conversations, %d turns, %d questions; want at least 5, 1,000 and 300", len(s.Conversations), turns, total)
	}
	t.Logf("%d conversations, %d turns, questions %v", len(s.Conversations), turns, questions)
}
