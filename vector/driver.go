package vector

import "context"

// Driver is what a memory backend implements. Callers use *Store, which
// validates every request before a driver sees it.
//
// Every method is scoped to the user id it is given: rows of other users do
// not exist for it. Slices returned are never shared with the driver.
// Methods are called concurrently, by one request too: a hybrid search
// runs Nearest and MatchText at the same time.
type Driver interface {
	// Spaces returns the recorded spaces of those of the collections that
	// have one.
	Spaces(ctx context.Context, userID string, collections []string) (map[string]Space, error)
	// CreateSpace records s for the collection unless a space is recorded
	// already, and returns the recorded one; concurrent callers all get
	// the space that won.
	CreateSpace(ctx context.Context, userID, collection string, s Space) (Space, error)
	// Insert stores memories, all or none. Each has an id, a CreatedAt
	// and an Embedding of its collection's dimension. An id that exists
	// already is an error wrapping ErrConflict.
	Insert(ctx context.Context, ms []Memory) error
	// Get returns the user's memories with these ids, in the order of ids,
	// leaving out ids that do not exist; Embedding is nil.
	Get(ctx context.Context, userID string, ids []string) ([]Memory, error)
	// Embeddings returns the stored vectors of those of the user's
	// memories with these ids that exist, by id, exactly as inserted (an
	// export with vectors reads them back). The slices are the caller's.
	Embeddings(ctx context.Context, userID string, ids []string) (map[string][]float32, error)
	// Nearest returns up to q.K ids of rows that pass q.Filter with a
	// cosine similarity to q.Vector of at least q.MinSimilarity, by
	// similarity descending, then id ascending, with their similarity as
	// Score. It must return min(q.K, such rows) ids: an approximate index
	// may reorder near neighbours, but must not lose rows to the filter.
	// All of q.Collections have the space of q.Vector.
	Nearest(ctx context.Context, q VectorQuery) ([]Scored, error)
	// MatchText returns up to q.K ids of rows that pass q.Filter and whose
	// title or text contains at least one of q.Terms, best first by the
	// backend's BM25 (higher Score is better), ties by text (bytewise),
	// then id: a stable key, so that two stores of the same memories,
	// whose ids are random, rank alike.
	MatchText(ctx context.Context, q TextQuery) ([]Scored, error)
	// List returns a page of the rows that pass q.Filter, ordered by q.Sort
	// (SortCreatedAt, SortOccurredAt or SortConfidence, confidence-less rows last in both
	// directions, ties by id ascending), and how many rows pass it.
	List(ctx context.Context, q ListQuery) ([]Memory, int, error)
	// Collections returns the user's collections that have a space, with
	// their memory counts, by name. readableTypes, when non-nil, counts
	// only the memories whose Types are all among them, as
	// Filter.ReadableTypes admits them.
	Collections(ctx context.Context, userID string, readableTypes []string) ([]Collection, error)
	// AllCollections returns every user's collections that have a space,
	// ordered by user, then name, for maintenance commands.
	AllCollections(ctx context.Context) ([]UserCollection, error)
	// Replace atomically replaces every memory of a collection with ms
	// (the same memories, with new embeddings) and records s as its space.
	// If the collection holds other rows than ms (a save that raced the
	// caller), it changes nothing and returns an error wrapping
	// ErrConflict. Replaced rows count as new rows: a driver that caches
	// vectors must notice.
	Replace(ctx context.Context, userID, collection string, s Space, ms []Memory) error
	// Close releases the driver's resources.
	Close() error
	ForgetDriver
}

// UserCollection names one user's collection.
type UserCollection struct {
	UserID     string
	Collection string
	Space      Space
}

// Scored is a row id with a signal's score.
type Scored struct {
	ID    string
	Score float64
}

// VectorQuery is the vector signal of a search.
type VectorQuery struct {
	Filter
	Vector        []float32
	MinSimilarity float64
	K             int
}

// TextQuery is the full-text signal of a search.
type TextQuery struct {
	Filter
	// Terms are lower-case words of letters and digits (see Terms).
	Terms []string
	K     int
}

// ListQuery is a listing without a query.
type ListQuery struct {
	Filter
	Sort      SortField // SortCreatedAt, SortOccurredAt or SortConfidence
	Ascending bool
	Limit     int
	Offset    int
	// NoTotal says that the caller ignores the total List returns: the
	// driver may return 0 rather than count.
	NoTotal bool
}
