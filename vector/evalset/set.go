package evalset

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"time"
)

// Set is the evaluation set: conversations whose turns are saved as
// memories, and questions whose answers are turns.
type Set struct {
	Conversations []Conversation `json:"conversations"`
}

// Conversation is one person talking with a friend over several sessions.
type Conversation struct {
	ID        string     `json:"id"`
	Speaker   string     `json:"speaker"`
	Friend    string     `json:"friend"`
	Turns     []Turn     `json:"turns"`
	Questions []Question `json:"questions"`
}

// Turn is one thing said, when it was said.
type Turn struct {
	ID      string    `json:"id"`
	Session int       `json:"session"`
	Speaker string    `json:"speaker"`
	At      time.Time `json:"at"`
	Text    string    `json:"text"`
}

// Memory is the text a turn is saved as: the speaker, then what they said,
// as a conversation importer would keep it.
func (t Turn) Memory() string { return t.Speaker + ": " + t.Text }

// Kind is a kind of question.
type Kind string

// The kinds of question.
const (
	// SingleFact is answered by one turn.
	SingleFact Kind = "single-fact"
	// MultiHop needs two turns: one names someone, the other says what
	// the question asks about them.
	MultiHop Kind = "multi-hop"
	// Temporal asks when something happened, or what came after it.
	Temporal Kind = "temporal"
	// OpenDomain needs knowledge of the world to see that a turn answers
	// it ("would she enjoy skiing?" of "I hate being cold").
	OpenDomain Kind = "open-domain"
)

// Kinds lists the kinds in the order reports print them.
var Kinds = []Kind{SingleFact, MultiHop, Temporal, OpenDomain}

// Question is asked of one conversation's memories; Answers are the ids of
// the turns that answer it (both are needed for a multi-hop question).
type Question struct {
	ID      string   `json:"id"`
	Kind    Kind     `json:"kind"`
	Text    string   `json:"text"`
	Answers []string `json:"answers"`
}

//go:embed testdata/conversations.json
var committed []byte

// Load returns the committed set.
func Load() (Set, error) {
	var s Set
	if err := json.Unmarshal(committed, &s); err != nil {
		return Set{}, fmt.Errorf("evalset: %w", err)
	}
	return s, nil
}
