package vector

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Store is the portable memory store that the rest of Cairn uses. It wraps
// a Driver and adds the rules every backend must obey. It is safe for
// concurrent use.
type Store struct {
	d   Driver
	now func() time.Time
}

// NewStore returns a Store over d. The Store owns d: Close closes it.
func NewStore(d Driver) *Store { return &Store{d: d, now: time.Now} }

// Close closes the driver.
func (s *Store) Close() error { return s.d.Close() }

// Limits of what a memory may hold.
const (
	MaxCollectionLen = 128
	MaxTextLen       = 64 << 10
	MaxTitleLen      = 1 << 10
	MaxTags          = 64
	MaxEntityIDs     = 256
	// MaxTypes bounds Memory.Types, and MaxTypeLen the bytes of each.
	MaxTypes   = 64
	MaxTypeLen = 200
)

var metadataKey = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// Save stores memories whose embeddings come from space, and returns them
// with their ids, creation and occurrence times set (an id or time the
// caller set is kept; OccurredAt defaults to CreatedAt). The first memory of a collection records space for it; a memory
// whose collection has another space is refused with a *SpaceError, and
// nothing is stored.
func (s *Store) Save(ctx context.Context, space Space, ms ...Memory) ([]Memory, error) {
	if err := validSpace(space); err != nil {
		return nil, err
	}
	out := make([]Memory, len(ms))
	byUser := map[string][]string{}
	now := s.now().UTC().Truncate(time.Microsecond)
	for i, m := range ms {
		if err := validMemory(m, space); err != nil {
			return nil, err
		}
		if m.ID == "" {
			m.ID = NewID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		m.CreatedAt = m.CreatedAt.UTC().Truncate(time.Microsecond)
		if m.OccurredAt.IsZero() {
			m.OccurredAt = m.CreatedAt
		}
		m.OccurredAt = m.OccurredAt.UTC().Truncate(time.Microsecond)
		if len(m.Types) > 0 {
			m.Types = slices.Compact(slices.Sorted(slices.Values(m.Types)))
		}
		if !slices.Contains(byUser[m.UserID], m.Collection) {
			byUser[m.UserID] = append(byUser[m.UserID], m.Collection)
		}
		out[i] = m
	}
	for user, colls := range byUser {
		spaces, err := s.d.Spaces(ctx, user, colls)
		if err != nil {
			return nil, err
		}
		for _, c := range colls {
			got, ok := spaces[c]
			if !ok {
				if got, err = s.d.CreateSpace(ctx, user, c, space); err != nil {
					return nil, err
				}
			}
			if got != space {
				return nil, &SpaceError{Collection: c, Recorded: got, Given: space}
			}
		}
	}
	if err := s.d.Insert(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// NewID returns a new memory id: "mem_" and 32 random hex digits.
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "mem_" + hex.EncodeToString(b)
}

func validSpace(sp Space) error {
	if sp.Embedder == "" {
		return invalid("space.embedder", "is required")
	}
	if sp.Dimension <= 0 || sp.Dimension > 16000 {
		return invalid("space.dimension", "must be between 1 and 16000, got %d", sp.Dimension)
	}
	return nil
}

func validMemory(m Memory, sp Space) error {
	switch {
	case m.UserID == "":
		return invalid("user_id", "is required")
	case m.Text == "":
		return invalid("text", "is required")
	case len(m.Text) > MaxTextLen:
		return invalid("text", "is %d bytes, at most %d allowed", len(m.Text), MaxTextLen)
	case len(m.Title) > MaxTitleLen:
		return invalid("title", "is %d bytes, at most %d allowed", len(m.Title), MaxTitleLen)
	case len(m.Tags) > MaxTags:
		return invalid("tags", "has %d tags, at most %d allowed", len(m.Tags), MaxTags)
	case len(m.Types) > MaxTypes:
		return invalid("types", "has %d types, at most %d allowed", len(m.Types), MaxTypes)
	case len(m.EntityIDs) > MaxEntityIDs:
		return invalid("entity_ids", "has %d ids, at most %d allowed", len(m.EntityIDs), MaxEntityIDs)
	case m.Confidence != nil && !(*m.Confidence >= 0 && *m.Confidence <= 1):
		return invalid("confidence", "must be between 0 and 1, got %v", *m.Confidence)
	}
	if err := validCollection("collection", m.Collection); err != nil {
		return err
	}
	for _, t := range m.Tags {
		if t == "" || len(t) > 128 {
			return invalid("tags", "a tag must have 1 to 128 bytes")
		}
	}
	for _, t := range m.Types {
		if t == "" || len(t) > MaxTypeLen {
			return invalid("types", "a type must have 1 to %d bytes", MaxTypeLen)
		}
	}
	if len(m.Embedding) != sp.Dimension {
		return &SpaceError{Collection: m.Collection, Recorded: sp, Given: Space{Embedder: sp.Embedder, Dimension: len(m.Embedding)}}
	}
	if !Finite(m.Embedding) {
		return invalid("embedding", "holds NaN or infinity")
	}
	return nil
}

func validCollection(field, c string) error {
	if c == "" || len(c) > MaxCollectionLen {
		return invalid(field, "must have 1 to %d bytes", MaxCollectionLen)
	}
	return nil
}

func validFilter(f Filter) error {
	if f.UserID == "" {
		return invalid("user_id", "is required")
	}
	if len(f.Collections) == 0 {
		return invalid("collections", "at least one collection is required")
	}
	for _, c := range f.Collections {
		if err := validCollection("collections", c); err != nil {
			return err
		}
	}
	if f.MinConfidence != nil && !(*f.MinConfidence >= 0 && *f.MinConfidence <= 1) {
		return invalid("min_confidence", "must be between 0 and 1")
	}
	if !f.OccurredFrom.IsZero() && !f.OccurredTo.IsZero() && f.OccurredTo.Before(f.OccurredFrom) {
		return invalid("date_range", "ends before it starts")
	}
	for k := range f.Metadata {
		if !metadataKey.MatchString(k) {
			return invalid("metadata", "filter key %q must be 1 to 64 letters, digits or underscores", k)
		}
	}
	return nil
}

// Get returns the user's memories with these ids, in the order of ids,
// leaving out those that do not exist.
func (s *Store) Get(ctx context.Context, userID string, ids []string) ([]Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.d.Get(ctx, userID, ids)
}

// Vectors returns the stored embeddings of those of the user's memories
// with these ids that exist, by id, exactly as they were saved.
func (s *Store) Vectors(ctx context.Context, userID string, ids []string) (map[string][]float32, error) {
	if len(ids) == 0 {
		return map[string][]float32{}, nil
	}
	return s.d.Embeddings(ctx, userID, ids)
}

// Collections returns the user's collections with their counts and spaces;
// readableTypes, when non-nil, counts only the memories a caller who may
// read those entity types reads (Filter.ReadableTypes).
func (s *Store) Collections(ctx context.Context, userID string, readableTypes []string) ([]Collection, error) {
	return s.d.Collections(ctx, userID, readableTypes)
}

// Search runs q: a hybrid search when q.Text is set, else a listing.
func (s *Store) Search(ctx context.Context, q Query) (Result, error) {
	if err := validFilter(q.Filter); err != nil {
		return Result{}, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return Result{}, invalid("limit", "must be between 1 and %d", MaxLimit)
	}
	if q.Offset < 0 {
		return Result{}, invalid("offset", "must not be negative")
	}
	switch q.Sort {
	case "":
		q.Sort = SortRelevance
	case SortRelevance, SortCreatedAt, SortConfidence, SortOccurredAt:
	default:
		return Result{}, invalid("sort", "must be relevance, created_at, occurred_at or confidence")
	}
	q.Filter.Collections = uniq(q.Filter.Collections)
	q.Filter.Tags = uniq(q.Filter.Tags)
	if q.Text == "" {
		return s.list(ctx, q)
	}
	return s.search(ctx, q)
}

func (s *Store) list(ctx context.Context, q Query) (Result, error) {
	sort := q.Sort
	if sort == SortRelevance {
		sort = SortCreatedAt
	}
	ms, total, err := s.d.List(ctx, ListQuery{Filter: q.Filter, Sort: sort, Ascending: q.Ascending, Limit: q.Limit, Offset: q.Offset, NoTotal: q.NoTotal})
	if err != nil {
		return Result{}, err
	}
	hits := make([]Hit, len(ms))
	for i, m := range ms {
		hits[i] = Hit{Memory: m}
	}
	if q.NoTotal {
		return Result{Hits: hits}, nil
	}
	return Result{Hits: hits, Total: total, HasMore: q.Offset+len(hits) < total}, nil
}

func (s *Store) search(ctx context.Context, q Query) (Result, error) {
	minSim := DefaultMinSimilarity
	if q.MinSimilarity != nil {
		minSim = *q.MinSimilarity
		if !(minSim >= -1 && minSim <= 1) {
			return Result{}, invalid("min_similarity", "must be between -1 and 1")
		}
	}
	if err := validSpace(q.Space); err != nil {
		return Result{}, err
	}
	// The query's embedding: given, or computed (Query.Embed) while the
	// spaces are read and the text signal runs; a search by the text
	// signal alone needs none.
	needVector := q.Only != SignalText
	embedded := make(chan error, 1)
	if needVector && q.Vector == nil && q.Embed != nil {
		ectx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			v, err := q.Embed(ectx)
			q.Vector = v
			embedded <- err
		}()
	} else {
		embedded <- nil
	}
	var embedOnce sync.Once
	var embedErr error
	queryVector := func() error {
		if !needVector {
			return nil
		}
		embedOnce.Do(func() {
			embedErr = <-embedded
			if embedErr == nil && len(q.Vector) != q.Space.Dimension {
				embedErr = invalid("vector", "has %d dimensions, the space says %d", len(q.Vector), q.Space.Dimension)
			}
		})
		return embedErr
	}
	if q.Embed == nil {
		if err := queryVector(); err != nil {
			return Result{}, err
		}
	}
	// Only collections recorded in the query's space can hold matches; a
	// collection without a space is empty, one with another space is an
	// error rather than silently unsearchable.
	spaces, err := s.d.Spaces(ctx, q.UserID, q.Collections)
	if err != nil {
		return Result{}, err
	}
	var colls []string
	for _, c := range q.Collections {
		sp, ok := spaces[c]
		if !ok {
			continue
		}
		if sp != q.Space {
			return Result{}, &SpaceError{Collection: c, Recorded: sp, Given: q.Space}
		}
		colls = append(colls, c)
	}
	if len(colls) == 0 {
		return Result{}, queryVector()
	}
	f := q.Filter
	f.Collections = colls
	depth := max(MinDepth, q.Offset+q.Limit+1)

	// The two signals are independent reads: a hybrid search runs them
	// at the same time, so that it takes as long as the slower one rather
	// than both (on PostgreSQL each runs on a connection of its own).
	var vec, text []Scored
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if err := queryVector(); err != nil || !needVector || isZero(q.Vector) {
			return err
		}
		vec, err = s.d.Nearest(gctx, VectorQuery{Filter: f, Vector: q.Vector, MinSimilarity: minSim, K: depth})
		return err
	})
	if terms := Terms(q.Text); len(terms) > 0 && q.Only != SignalVector {
		g.Go(func() (err error) {
			text, err = s.d.MatchText(gctx, TextQuery{Filter: f, Terms: terms, K: depth})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return Result{}, err
	}
	fused := q.Fusion.Fuse(vec, text, minSim)
	if fused, err = s.sequence(ctx, q, f, fused); err != nil {
		return Result{}, err
	}
	res := Result{Total: len(fused)}
	if q.Sort != SortRelevance || q.Ascending {
		// Other orders need every candidate's row.
		if err := s.sortCandidates(ctx, q, fused); err != nil {
			return Result{}, err
		}
	}
	if q.Offset >= len(fused) {
		return res, nil
	}
	page := fused[q.Offset:min(len(fused), q.Offset+q.Limit)]
	res.HasMore = q.Offset+len(page) < len(fused)
	ids := make([]string, len(page))
	for i, h := range page {
		ids[i] = h.ID
	}
	ms, err := s.d.Get(ctx, q.UserID, ids)
	if err != nil {
		return Result{}, err
	}
	byID := make(map[string]Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	for _, h := range page {
		m, ok := byID[h.ID]
		if !ok {
			continue // deleted between the two reads
		}
		h.Memory = m
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// sortCandidates orders fused hits by q.Sort, with Memory filled in.
func (s *Store) sortCandidates(ctx context.Context, q Query, hits []Hit) error {
	if q.Sort != SortRelevance {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		ms, err := s.d.Get(ctx, q.UserID, ids)
		if err != nil {
			return err
		}
		byID := make(map[string]Memory, len(ms))
		for _, m := range ms {
			byID[m.ID] = m
		}
		for i := range hits {
			hits[i].Memory = byID[hits[i].ID]
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		var c int
		switch q.Sort {
		case SortRelevance:
			c = cmp.Compare(a.Score, b.Score)
		case SortCreatedAt:
			c = a.CreatedAt.Compare(b.CreatedAt)
		case SortOccurredAt:
			c = a.OccurredAt.Compare(b.OccurredAt)
		case SortConfidence:
			// Confidence-less rows last in both directions.
			switch {
			case a.Confidence == nil && b.Confidence == nil:
			case a.Confidence == nil:
				return 1
			case b.Confidence == nil:
				return -1
			default:
				c = cmp.Compare(*a.Confidence, *b.Confidence)
			}
		}
		if !q.Ascending {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		return c
	})
	return nil
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func uniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := make([]string, 0, len(s))
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
