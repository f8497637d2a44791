package vector

import (
	"context"
	"slices"
	"time"
)

// Memory is one stored memory: a free-text note or insight with its
// embedding. Its text is untrusted data: it is returned as data, never
// interpreted.
type Memory struct {
	ID         string
	UserID     string
	Collection string
	Text       string
	Title      string
	Tags       []string
	// Confidence is in [0, 1]; nil means not stated. A MinConfidence filter
	// never matches a memory without one.
	Confidence *float64
	Metadata   map[string]any
	EntityIDs  []string
	SourceID   string
	// Types are the entity types the memory's content is data of (a file's
	// text kept as a memory carries the types its interpretation found):
	// only a caller that may read every one of them may read the memory.
	// Empty: the collection's consent alone governs it. Saved sorted and
	// without duplicates.
	Types []string
	// CreatedAt is when the memory was saved: UTC, truncated to the
	// microsecond.
	CreatedAt time.Time
	// OccurredAt is when the remembered thing happened or was said (a
	// conversation's turn saved later keeps its own time): UTC, truncated
	// to the microsecond; Save sets it to CreatedAt when zero. Date
	// filters (Filter.OccurredFrom, OccurredTo) bound it.
	OccurredAt time.Time
	// Embedding is set when saving. Reads leave it nil: callers never need
	// the raw vector back, and it is the bulk of a row.
	Embedding []float32
}

// Space is the embedding space of a collection: the embedder that made its
// vectors and their dimension. It is recorded with the collection's first
// memory, and every later vector, stored or searched, must come from the
// same space.
type Space struct {
	Embedder  string
	Dimension int
}

// Collection describes one of a user's collections.
type Collection struct {
	Name  string
	Count int
	Space Space
}

// Filter selects the rows a search or listing considers. Every set field
// must match.
type Filter struct {
	UserID string
	// Collections are searched together; at least one is required.
	Collections []string
	// Keywords must all occur in the title or text (full-text match,
	// stemmed by the backend). Use Terms to split a phrase.
	Keywords []string
	// Tags must all be on the memory.
	Tags []string
	// OccurredFrom and OccurredTo bound OccurredAt, both inclusive; zero means
	// unbounded.
	OccurredFrom, OccurredTo time.Time
	// MinConfidence excludes memories with a lower or no confidence.
	MinConfidence *float64
	// EntityID must be one of the memory's EntityIDs.
	EntityID string
	// SourceID must equal the memory's SourceID.
	SourceID string
	// Metadata maps top-level metadata keys to the string value they must
	// have. Keys are letters, digits and underscores.
	Metadata map[string]string
	// ReadableTypes, when non-nil, admits only memories whose Types are all
	// among them (a caller's readable entity types); nil means no check. An
	// empty non-nil slice admits only memories that carry no types.
	ReadableTypes []string
}

// AdmitsTypes reports whether a memory carrying types passes
// f.ReadableTypes: every one of them among the readable ones, or no
// ReadableTypes at all. The drivers apply the same rule in their queries.
func (f Filter) AdmitsTypes(types []string) bool {
	if f.ReadableTypes == nil {
		return true
	}
	for _, t := range types {
		if !slices.Contains(f.ReadableTypes, t) {
			return false
		}
	}
	return true
}

// SortField orders results.
type SortField string

// The sort orders of a search.
const (
	// SortRelevance orders by fused score; it is the default for a search
	// with a query and means SortCreatedAt without one.
	SortRelevance SortField = "relevance"
	SortCreatedAt SortField = "created_at"
	// SortConfidence puts memories without a confidence last.
	SortConfidence SortField = "confidence"
	// SortOccurredAt orders by when the memory happened (OccurredAt).
	SortOccurredAt SortField = "occurred_at"
)

// Query is a search or, without Text, a listing.
type Query struct {
	Filter
	// Text is the query. When empty, the search is a plain listing of the
	// rows that pass the filter, newest first by default.
	Text string
	// Vector is Text's embedding in Space; required with Text unless
	// Embed is given. A zero vector (for instance of a text with no words)
	// disables the vector signal.
	Vector []float32
	// Embed, when Vector is nil, computes it: the search calls it at its
	// start and meanwhile reads the collections' spaces and runs the text
	// signal, so that a search takes about as long as the embedding plus
	// the vector signal rather than the embedding plus the slower signal.
	// Its error is the search's, as it is.
	Embed func(context.Context) ([]float32, error)
	Space Space
	// MinSimilarity is the cosine similarity, in [-1, 1], a row needs for
	// the vector signal; nil means DefaultMinSimilarity.
	MinSimilarity *float64
	Sort          SortField
	// Ascending reverses the default descending order.
	Ascending bool
	// Limit is the page size: 0 means DefaultLimit, at most MaxLimit.
	Limit  int
	Offset int
	// Fusion combines the signals; the zero value is DefaultFusion.
	Fusion Fusion
	// Only, when set, runs that signal alone: an evaluation compares
	// each signal with their fusion.
	Only Signal
	// NoTotal says that the caller of a listing (no Text) needs neither
	// Result.Total nor Result.HasMore: both are then zero, and the
	// backend need not count every row that passes the filter (a
	// context load lists the ten newest of 10,000 memories).
	NoTotal bool
	// Sequence says how a question that asks what came after (or
	// before) something ranks the memories that occurred next to its
	// best hit; the zero value is DefaultSequence.
	Sequence Sequence
}

// Defaults and bounds of Query.
const (
	DefaultMinSimilarity = 0.7
	DefaultLimit         = 10
	MaxLimit             = 100
	// MinDepth is the fewest candidates each signal contributes to the
	// fusion; a page deeper than that asks for offset+limit+1.
	MinDepth = 100
	// RRFK is the k of reciprocal rank fusion: a row at rank r (from 1) of
	// a signal scores 1/(RRFK+r) from it.
	RRFK = 60
)

// Signal names a ranking a hit was found by.
type Signal string

// The signals of a hybrid search.
const (
	SignalVector Signal = "vector"
	SignalText   Signal = "text"
	// SignalSequence found a memory that occurred next to the best hit
	// of a question about what came after or before it (Sequence).
	SignalSequence Signal = "sequence"
)

// Hit is one search result.
type Hit struct {
	Memory
	// Score is the fused reciprocal-rank score; 0 for a listing.
	Score float64
	// Similarity is the cosine similarity to the query, set when the
	// vector signal matched.
	Similarity *float64
	// Signals says which signals found the hit, vector first.
	Signals []Signal
}

// Result is a page of hits.
type Result struct {
	Hits []Hit
	// Total is, for a listing, the number of rows that pass the filter; for
	// a search, the number of candidates the signals found (at most twice
	// the depth, see MinDepth).
	Total   int
	HasMore bool
}
