package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Completion of entity names and ids (what an MCP client offers while its
// user types an argument).
//
// An entity is completed from keys: its name key, the words of its
// canonical name lower-cased and joined by single spaces (the name as
// SearchText cuts it); an inner key for every later word of the name, the
// name key from that word on; and its id. A typed value becomes a key the
// same way (CompletionKey), and an entity matches when one of its keys
// begins with it: "acme ro" completes "ACME Rockets, Inc." from its name
// key, "rock" from the inner key "rockets inc", and "ent_4f" its id.
// Backends keep the keys of each unmerged entity in an index by user and
// type, so that a completion reads at most its limit of keys per readable
// type, however many entities match: a caller allowed one small type reads
// that type's keys only.

// Bounds of completion keys.
const (
	// MaxCompletionKeyBytes is the longest key kept whole; longer keys,
	// and typed values, are cut to it (at a character boundary), so that
	// a value longer than a name's key still matches the name.
	MaxCompletionKeyBytes = 128
	// MaxInnerKeys is how many inner keys a name has at most: those of its
	// second to its seventeenth word.
	MaxInnerKeys = MaxSearchTerms
)

// Kinds of completion key, in the order a completion ranks them.
const (
	KeyName  = 0 // the whole name
	KeyInner = 1 // the name from one of its later words on
	KeyID    = 2 // the entity's id
)

// NameKeys returns the name key of name followed by its inner keys: the
// keys a backend stores for an entity of that canonical name (KeyName for
// the first, KeyInner for the others). A name without words has none.
func NameKeys(name string) []string {
	words := wordsOf(name)
	if len(words) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(words), MaxInnerKeys+1))
	for i := range min(len(words), MaxInnerKeys+1) {
		out = append(out, cutKey(strings.Join(words[i:], " ")))
	}
	return out
}

// NameKeysJSON is NameKeys(name) as a JSON array ("[]" for none), as the
// SQL backends store it with the entity for their triggers to expand into
// their table of keys.
func NameKeysJSON(name string) string {
	b, _ := json.Marshal(NameKeys(name))
	if len(b) == 0 || string(b) == "null" {
		return "[]"
	}
	return string(b)
}

// CompletionKey returns the key a typed value completes: its words,
// lower-cased and joined by single spaces, with a space after the last
// when the value ends between words ("Acme " completes "acme rockets",
// not "acmeville"), cut as keys are. It is empty when the value has no
// word.
func CompletionKey(typed string) string {
	words := wordsOf(typed)
	if len(words) == 0 {
		return ""
	}
	key := strings.Join(words, " ")
	if r, _ := utf8.DecodeLastRuneInString(typed); notWordRune(r) {
		key += " "
	}
	return cutKey(key)
}

func cutKey(k string) string {
	if len(k) <= MaxCompletionKeyBytes {
		return k
	}
	k = k[:MaxCompletionKeyBytes]
	for len(k) > 0 && !utf8.ValidString(k) {
		k = k[:len(k)-1]
	}
	return k
}

// EntityCompletion asks for the entities one user's typed value completes.
type EntityCompletion struct {
	UserID string
	// Prefix is the beginning of a key: CompletionKey of a typed name, or
	// the beginning of an id as typed. An empty one completes nothing.
	Prefix string
	// IDs completes ids (KeyID) rather than names (KeyName, KeyInner).
	IDs bool
	// Types restricts the completion to these entity types; nil means any
	// type, an empty non-nil slice none.
	Types []string
	// Limit is how many keys are read; 0 means 10.
	Limit int
}

// EntityCompletionHit is an entity a completion found, and the key it was
// found by.
type EntityCompletionHit struct {
	ID   string
	Kind int // KeyName, KeyInner or KeyID
	Key  string
}

// EntityCompleter is an optional capability of a DriverTx: it answers a
// completion from an index of the keys of unmerged entities by user and
// type. A driver without one has no completion keys: its callers complete
// with the word search (SearchEntities), ranked as it ranks.
type EntityCompleter interface {
	// CompleteEntities orders the keys of q.Prefix's kinds (KeyID with
	// q.IDs, KeyName and KeyInner otherwise) of q.UserID's unmerged
	// entities of q.Types that begin with q.Prefix by kind, then key (as
	// bytes), then entity id, takes the first q.Limit, and returns their
	// entities in that order, each at its first key only (so that it may
	// return fewer than the keys it took). Reading the keys of each type
	// in that order, it stops at q.Limit per type.
	CompleteEntities(ctx context.Context, q EntityCompletion) ([]EntityCompletionHit, error)
}

// CompleteEntities answers q with the driver's EntityCompleter; ok is
// false when the driver has none (see EntityCompleter).
func (tx *Tx) CompleteEntities(ctx context.Context, q EntityCompletion) (hits []EntityCompletionHit, ok bool, err error) {
	c, ok := tx.DriverTx.(EntityCompleter)
	if !ok {
		return nil, false, nil
	}
	if q.Prefix == "" || (q.Types != nil && len(q.Types) == 0) {
		return []EntityCompletionHit{}, true, nil
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	hits, err = c.CompleteEntities(ctx, q)
	if err != nil {
		return nil, true, fmt.Errorf("graph: complete entities: %w", err)
	}
	return hits, true, nil
}

// MatchCompletion returns the keys of an unmerged entity of that id and
// canonical name that begin with q.Prefix, of q's kinds: the definition of
// a completion match, which the conformance suite holds backends to.
func MatchCompletion(id, name string, q EntityCompletion) []EntityCompletionHit {
	if q.Prefix == "" {
		return nil
	}
	if q.IDs {
		if strings.HasPrefix(id, q.Prefix) {
			return []EntityCompletionHit{{ID: id, Kind: KeyID, Key: id}}
		}
		return nil
	}
	var out []EntityCompletionHit
	for i, k := range NameKeys(name) {
		if strings.HasPrefix(k, q.Prefix) {
			out = append(out, EntityCompletionHit{ID: id, Kind: min(i, KeyInner), Key: k})
		}
	}
	return out
}

// FirstCompletions orders keys as EntityCompleter says, takes the first
// limit and keeps each entity's first: what a backend that has read the
// first limit keys of each type returns.
func FirstCompletions(keys []EntityCompletionHit, limit int) []EntityCompletionHit {
	slices.SortFunc(keys, func(a, b EntityCompletionHit) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Key, b.Key), strings.Compare(a.ID, b.ID))
	})
	keys = keys[:min(len(keys), limit)]
	out := []EntityCompletionHit{}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k.ID] {
			seen[k.ID] = true
			out = append(out, k)
		}
	}
	return out
}
