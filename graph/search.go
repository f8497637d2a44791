package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Full-text search over entities.
//
// What a user types is cut into terms by SearchTerms: every run of letters,
// digits and marks, lower-cased; everything else (spaces, punctuation, @,
// quotes, operators) only separates terms. An entity matches when every
// term but the last is a word of its canonical name or of the text of its
// snapshot, and the last is a word or the beginning of one (so that a
// search box finds "Quill 004216" from "quill 0042"). The text of a
// snapshot is its string and number values, nested ones included, cut into
// words the same way; field names are not part of it. An entity's
// identifiers are normalised copies of its name and of snapshot fields, so
// they need no index of their own.

// Bounds of a search.
const (
	// MaxSearchTerms is how many terms SearchTerms keeps; the rest of a
	// query is ignored.
	MaxSearchTerms = 16
	// MaxSearchTermBytes is the longest term SearchTerms keeps whole; a
	// longer one is cut (and still matches the words it begins, being the
	// last term, or nothing otherwise).
	MaxSearchTermBytes = 64
)

// SearchTerms splits a query into the terms an entity search matches: runs
// of letters, digits and marks, lower-cased, at most MaxSearchTerms of at
// most MaxSearchTermBytes each. It returns nil when text has none.
func SearchTerms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), notWordRune) {
		if len(out) == MaxSearchTerms {
			break
		}
		if len(w) > MaxSearchTermBytes {
			w = strings.ToValidUTF8(w[:MaxSearchTermBytes], "")
		}
		out = append(out, w)
	}
	return out
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mark, r)
}

// EntitySearch is a full-text query over one user's entities.
type EntitySearch struct {
	UserID string
	// Terms are the words to find, as SearchTerms makes them; the last
	// one also matches as a prefix. No terms match nothing.
	Terms []string
	// Types restricts the result to these entity types; nil means any type,
	// an empty non-nil slice means none.
	Types         []string
	IncludeMerged bool
	Page          Page
}

// EntityHit is an entity a search found.
type EntityHit struct {
	ID string
	// Score is the entity's relevance: higher is better. Scores are the
	// backend's own (bm25, ts_rank, Lucene's), comparable only within one
	// answer.
	Score float64
}

// EntitySearcher is an optional capability of a DriverTx: it answers an
// entity search from a full-text index (FTS5, a tsvector, Lucene) rather
// than by reading every entity. Tx.SearchEntities uses it when the
// driver's transaction has it, and a scan of the entities otherwise.
type EntitySearcher interface {
	// SearchEntities returns a page of the entities of q.UserID that match
	// every term of q.Terms (see the package's notes on search), of
	// q.Types, merged ones only with q.IncludeMerged, ordered by Score
	// descending, then id ascending, and how many match in all. An entity
	// a term matches in its canonical name scores higher than one it
	// matches only in its snapshot, other things equal. The index follows
	// every write of the transaction's snapshot: an entity whose name or
	// snapshot changed is found by its new text only, once that write is
	// visible to the transaction. Page.Limit 0 means 100.
	SearchEntities(ctx context.Context, q EntitySearch) ([]EntityHit, int, error)
}

// SearchEntities answers q with the driver's EntitySearcher when it has
// one, and otherwise by reading the entities that pass q's filter and
// matching their text here (slower, and scored by a simple count: name
// matches weigh ten, snapshot ones one).
func (tx *Tx) SearchEntities(ctx context.Context, q EntitySearch) ([]EntityHit, int, error) {
	if len(q.Terms) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []EntityHit{}, 0, nil
	}
	if s, ok := tx.DriverTx.(EntitySearcher); ok {
		return s.SearchEntities(ctx, q)
	}
	return tx.scanEntities(ctx, q)
}

// scanEntities is SearchEntities without an index.
func (tx *Tx) scanEntities(ctx context.Context, q EntitySearch) ([]EntityHit, int, error) {
	const pageSize = 500
	f := EntityFilter{UserID: q.UserID, Types: q.Types, IncludeMerged: q.IncludeMerged}
	var hits []EntityHit
	for offset := 0; ; offset += pageSize {
		f.Page = Page{Limit: pageSize, Offset: offset}
		ents, total, err := tx.ListEntities(ctx, f)
		if err != nil {
			return nil, 0, fmt.Errorf("graph: search entities: %w", err)
		}
		for _, e := range ents {
			if score, ok := MatchEntity(e, q.Terms); ok {
				hits = append(hits, EntityHit{ID: e.ID, Score: score})
			}
		}
		if offset+pageSize >= total || len(ents) == 0 {
			break
		}
	}
	slices.SortFunc(hits, func(a, b EntityHit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID)) })
	total := len(hits)
	limit := q.Page.Limit
	if limit <= 0 {
		limit = 100
	}
	start := min(max(q.Page.Offset, 0), total)
	return slices.Clone(hits[start:min(start+limit, total)]), total, nil
}

// MatchEntity reports whether e matches terms (see EntitySearcher) and
// scores it by a simple count: each term found among the words of the
// canonical name adds ten, each found among the words of the snapshot text
// one. It is the portable definition of a match, which tests hold index
// backends to.
func MatchEntity(e Entity, terms []string) (float64, bool) {
	if len(terms) == 0 {
		return 0, false
	}
	name := wordsOf(e.CanonicalName)
	var body []string
	snapshotWords(e.Snapshot, &body)
	score := 0.0
	for i, t := range terms {
		prefix := i == len(terms)-1
		inName, inBody := hasWord(name, t, prefix), hasWord(body, t, prefix)
		if !inName && !inBody {
			return 0, false
		}
		if inName {
			score += 10
		}
		if inBody {
			score++
		}
	}
	return score, true
}

// SearchText returns the words of an entity that a search matches, as an
// index backend stores them: the words of its canonical name, and those of
// its snapshot text, each lower-cased and joined by single spaces (so that
// a whitespace tokenizer cuts them exactly as MatchEntity does).
func SearchText(e Entity) (name, body string) {
	var words []string
	snapshotWords(e.Snapshot, &words)
	slices.Sort(words)
	return strings.Join(wordsOf(e.CanonicalName), " "), strings.Join(slices.Compact(words), " ")
}

// wordsOf is every word of text, without SearchTerms' bounds.
func wordsOf(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), notWordRune)
}

// snapshotWords appends the words of every string and number of v.
func snapshotWords(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, wordsOf(v)...)
	case json.Number:
		*out = append(*out, wordsOf(v.String())...)
	case float64, int, int64:
		*out = append(*out, wordsOf(fmt.Sprint(v))...)
	case map[string]any:
		for _, x := range v {
			snapshotWords(x, out)
		}
	case []any:
		for _, x := range v {
			snapshotWords(x, out)
		}
	}
}

func hasWord(words []string, term string, prefix bool) bool {
	for _, w := range words {
		if w == term || (prefix && strings.HasPrefix(w, term)) {
			return true
		}
	}
	return false
}
