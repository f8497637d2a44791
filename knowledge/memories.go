package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// Errors of the memory methods.
var (
	// ErrMemoriesUnavailable means the service was built without a memory
	// store.
	ErrMemoriesUnavailable = fmt.Errorf("memories are not configured on this server: %w", ErrUnavailable)
	// ErrEmbedderUnavailable means the embedding provider failed; the
	// error is an *EmbedderError. Retrying later may succeed.
	ErrEmbedderUnavailable = errors.New("embedding provider unavailable")
)

// EmbedderError reports a failed embedding call with the provider's name.
type EmbedderError struct {
	Embedder string
	Err      error
}

func (e *EmbedderError) Error() string {
	return fmt.Sprintf("%s: %s: %v", ErrEmbedderUnavailable, e.Embedder, e.Err)
}

// Unwrap makes errors.Is(err, ErrEmbedderUnavailable) true, and keeps the
// provider's error reachable.
func (e *EmbedderError) Unwrap() []error { return []error{ErrEmbedderUnavailable, e.Err} }

// InsightsCollection is the collection that store_insight and
// query_insights use.
const InsightsCollection = "insights"

// MemoryRequest is one memory to save.
type MemoryRequest struct {
	Collection string
	Text       string
	Title      string
	Tags       []string
	Confidence *float64
	Metadata   map[string]any
	// EntityIDs link the memory to entities, which must exist and be
	// readable by the caller.
	EntityIDs []string
	// SourceID links the memory to a source, which must exist. The
	// memory then carries the types the source was found to hold
	// (Options.SourceTypes) besides Types.
	SourceID string
	// Types are the entity types the memory's content is data of: only a
	// caller that may read every one of them reads the memory (a file's
	// text kept as a memory carries the types its interpretation stored).
	// Names are normalised as entity types are.
	Types []string
	// OccurredAt is when the remembered thing happened or was said; zero
	// means now.
	OccurredAt time.Time
	// Claims are values the memory states for entity fields. Each is
	// checked against the field's current value once the memory is saved,
	// and a disagreement with a value from another source is recorded as a
	// contradiction (see CheckClaims). A claim never changes the entity.
	Claims []Claim
}

// Claim is a value a memory states for a field of an entity.
type Claim struct {
	EntityID string
	Field    string
	Value    any
}

// MaxClaims is the most claims one memory may make.
const MaxClaims = 32

// SavedMemory is a stored memory and the contradictions its claims raised.
type SavedMemory struct {
	vector.Memory
	// Contradictions are those recorded for the memory's claims, in the
	// order of the claims.
	Contradictions []Contradiction
}

// SaveMemory embeds and stores a memory, synchronously, and returns it. The
// caller needs write access to the collection.
//
// Claims are checked before anything is stored: each must name an entity
// the caller may read (ErrEntityNotFound otherwise, exactly as for a
// missing one) and a field of that entity's schema, with a value of the
// field's type. The entities claimed about are linked to the memory. Once
// the memory is saved, its claims are compared with the current values
// (CheckClaims, the memory's id standing for the new observation) and the
// contradictions recorded are returned. The memory is stored by then, so a
// failure to record them is logged rather than failing the call.
func (s *Service) SaveMemory(ctx context.Context, c Caller, r MemoryRequest) (SavedMemory, error) {
	m, claims, err := s.prepareMemory(ctx, c, r)
	if err != nil {
		return SavedMemory{}, err
	}
	vec, space, err := s.embed(ctx, memoryText(r.Title, r.Text))
	if err != nil {
		return SavedMemory{}, err
	}
	m.Embedding = vec
	saved, err := s.memories.Save(ctx, space, m)
	if err != nil {
		return SavedMemory{}, memoryError(err)
	}
	out := SavedMemory{Memory: saved[0]}
	if len(claims) == 0 {
		return out, nil
	}
	for i := range claims {
		claims[i].ClaimID, claims[i].SourceID = out.ID, out.SourceID
	}
	// The memory is stored: the request must not fail now, or a retry
	// would save it twice.
	found, err := s.CheckClaims(ctx, c, claims)
	if err != nil {
		s.log.Warn("memory claims not checked", "memory", out.ID, "claims", len(claims), "err", err)
	}
	out.Contradictions = found
	return out, nil
}

// prepareMemory checks a request as SaveMemory does and returns the memory
// to store, without its embedding, and its claims.
func (s *Service) prepareMemory(ctx context.Context, c Caller, r MemoryRequest) (vector.Memory, []FieldClaim, error) {
	if s.memories == nil {
		return vector.Memory{}, nil, ErrMemoriesUnavailable
	}
	now := s.clock()
	r.Collection = strings.TrimSpace(r.Collection)
	if r.Collection == "" {
		return vector.Memory{}, nil, invalid("collection", "string", "empty", "collection is required")
	}
	if strings.TrimSpace(r.Text) == "" {
		return vector.Memory{}, nil, invalid("text", "non-empty string", "empty", "text is required")
	}
	if err := c.need(Write, MemoryResource(r.Collection)); err != nil {
		return vector.Memory{}, nil, err
	}
	if err := s.checkFieldSizes("metadata", r.Metadata); err != nil {
		return vector.Memory{}, nil, err
	}
	for i, cl := range r.Claims {
		if err := s.checkFieldSize(fmt.Sprintf("claims[%d].value", i), cl.Value); err != nil {
			return vector.Memory{}, nil, err
		}
	}
	if err := s.checkLinks(ctx, c, r.EntityIDs, r.SourceID); err != nil {
		return vector.Memory{}, nil, err
	}
	claims, err := s.checkClaimRequests(ctx, c, r.Claims)
	if err != nil {
		return vector.Memory{}, nil, err
	}
	entityIDs := r.EntityIDs
	for _, cl := range claims {
		if !slices.Contains(entityIDs, cl.EntityID) {
			entityIDs = append(slices.Clip(entityIDs), cl.EntityID)
		}
	}
	types, err := s.memoryTypes(ctx, c, r)
	if err != nil {
		return vector.Memory{}, nil, err
	}
	if r.OccurredAt.IsZero() {
		r.OccurredAt = now
	}
	return vector.Memory{
		UserID: c.UserID, Collection: r.Collection, Text: r.Text, Title: r.Title, Tags: r.Tags, Confidence: r.Confidence,
		Metadata: r.Metadata, EntityIDs: entityIDs, SourceID: r.SourceID, Types: types, CreatedAt: now, OccurredAt: r.OccurredAt,
	}, claims, nil
}

// checkClaimRequests validates a memory's claims before it is saved and
// returns them as field claims about the entities they resolve to (an
// entity merged since is replaced by the one it was merged into). The value
// is coerced to the field's type, so a confirmed claim is a valid
// correction.
func (s *Service) checkClaimRequests(ctx context.Context, c Caller, claims []Claim) ([]FieldClaim, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	if len(claims) > MaxClaims {
		return nil, invalid("claims", fmt.Sprintf("at most %d claims", MaxClaims), fmt.Sprintf("%d claims", len(claims)), "too many claims")
	}
	out := make([]FieldClaim, len(claims))
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		seen := map[[2]string]int{}
		for i, cl := range claims {
			path := fmt.Sprintf("claims[%d]", i)
			if err := checkID(path+".entity_id", cl.EntityID); err != nil {
				return err
			}
			e, err := tx.ResolveEntity(ctx, c.UserID, cl.EntityID)
			if graph.IsNotFound(err) || (err == nil && !c.readable(e.Type)) {
				return &NotFoundError{Kind: ErrEntityNotFound, ID: cl.EntityID}
			}
			if err != nil {
				return err
			}
			// Only now, with the entity known to be readable, may the
			// error describe its schema.
			sc, err := s.schemaFor(ctx, c.UserID, e.Type)
			if err != nil {
				return err
			}
			f, ok := sc.Fields[cl.Field]
			if !ok {
				return invalid(path+".field", "one of: "+strings.Join(sc.FieldNames(), ", "), "string",
					"%q is not a field of the %s schema", truncate(cl.Field, 64), e.Type)
			}
			if cl.Value == nil {
				return invalid(path+".value", "a non-null value", "null", "is required")
			}
			v, err := coerceField(path+".value", f.Type, cl.Value)
			if err != nil {
				return err
			}
			key := [2]string{e.ID, cl.Field}
			if j, dup := seen[key]; dup {
				return invalid(path, "one claim per entity field", "a repeated claim",
					"claims[%d] already states %s of %s", j, cl.Field, e.ID)
			}
			seen[key] = i
			out[i] = FieldClaim{EntityID: e.ID, Field: cl.Field, Value: v}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// memoryTypes returns the types a memory carries: those of the request
// and those its source was found to hold, normalised, sorted and without
// repeats.
func (s *Service) memoryTypes(ctx context.Context, c Caller, r MemoryRequest) ([]string, error) {
	types := make([]string, 0, len(r.Types))
	for _, t := range r.Types {
		types = append(types, schema.NormalizeTypeName(t))
	}
	if r.SourceID != "" && s.sourceTypes != nil {
		more, err := s.sourceTypes(ctx, c.UserID, r.SourceID)
		if err != nil {
			return nil, fmt.Errorf("knowledge: types of source %s: %w", r.SourceID, err)
		}
		types = append(types, more...)
	}
	slices.Sort(types)
	return slices.Compact(types), nil
}

// memoryReadableTypes returns the entity types whose data the caller may
// read, as vector.Filter.ReadableTypes takes them: nil when it may read
// every type. The candidates are the types the user's schemas name (every
// type that was stored has one), so a memory carrying a type none names is
// left out: the filter fails closed.
func (s *Service) memoryReadableTypes(ctx context.Context, c Caller) ([]string, error) {
	if c.Allowed == nil {
		return nil, nil
	}
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	return c.readableOf(set.Types()), nil
}

// checkLinks verifies that linked entities and source exist for the
// caller; an entity the caller may not read is reported as missing.
func (s *Service) checkLinks(ctx context.Context, c Caller, entityIDs []string, sourceID string) error {
	if len(entityIDs) == 0 && sourceID == "" {
		return nil
	}
	return s.graph.View(ctx, func(tx *graph.Tx) error {
		if sourceID != "" {
			if !c.May(Read, ResourceSources) {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: sourceID}
			}
			if _, err := tx.Source(ctx, c.UserID, sourceID); graph.IsNotFound(err) {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: sourceID}
			} else if err != nil {
				return err
			}
		}
		if len(entityIDs) == 0 {
			return nil
		}
		found, err := tx.Entities(ctx, c.UserID, entityIDs)
		if err != nil {
			return err
		}
		ok := map[string]bool{}
		for _, e := range found {
			ok[e.ID] = c.readable(e.Type)
		}
		for _, id := range entityIDs {
			if !ok[id] {
				return &NotFoundError{Kind: ErrEntityNotFound, ID: id}
			}
		}
		return nil
	})
}

// DefaultMinSimilarity is the vector threshold of a memory search that
// names none: the embedder's own (embed.Thresholder), or
// vector.DefaultMinSimilarity (0.7, suited to the lexical embedder).
func (s *Service) DefaultMinSimilarity() float64 {
	if t, ok := s.embedder.(embed.Thresholder); ok {
		return t.MinSimilarity()
	}
	return vector.DefaultMinSimilarity
}

// EmbedderName is the name of the service's embedder.
func (s *Service) EmbedderName() string { return s.embedder.Name() }

// embed embeds one text and returns its vector with the space it is in.
func (s *Service) embed(ctx context.Context, text string) ([]float32, vector.Space, error) {
	vecs, err := s.embedder.Embed(ctx, []string{text})
	if err != nil {
		if ctx.Err() != nil {
			return nil, vector.Space{}, ctx.Err()
		}
		return nil, vector.Space{}, &EmbedderError{Embedder: s.embedder.Name(), Err: err}
	}
	if len(vecs) != 1 || len(vecs[0]) == 0 {
		return nil, vector.Space{}, &EmbedderError{Embedder: s.embedder.Name(), Err: errors.New("no vector returned")}
	}
	return vecs[0], vector.Space{Embedder: s.embedder.Name(), Dimension: len(vecs[0])}, nil
}

// memoryError turns the vector package's validation errors into the
// domain's; space mismatches and everything else pass through.
func memoryError(err error) error {
	var inv *vector.InvalidError
	if errors.As(err, &inv) {
		return &ValidationError{Field: inv.Field, Message: inv.Message}
	}
	return err
}

// MemoryQuery is a search or listing of memories.
type MemoryQuery struct {
	// Collections to search; those the caller may not read are skipped
	// silently, as if they were empty.
	Collections []string
	// Query is the text searched by meaning and by words; empty lists the
	// memories that pass the filters instead.
	Query string
	// MinSimilarity is the vector signal's threshold; nil means the
	// embedder's default (DefaultMinSimilarity).
	MinSimilarity *float64
	// Keywords must all occur in the memory's title or text.
	Keywords      string
	Tags          []string
	From, To      time.Time
	MinConfidence *float64
	EntityID      string
	SourceID      string
	Metadata      map[string]string
	Sort          vector.SortField
	Ascending     bool
	Limit, Offset int
}

// SearchMemories runs a hybrid search (or a listing, without a query) over
// the collections of q the caller may read.
func (s *Service) SearchMemories(ctx context.Context, c Caller, q MemoryQuery) (vector.Result, error) {
	if s.memories == nil {
		return vector.Result{}, ErrMemoriesUnavailable
	}
	if len(q.Collections) == 0 {
		return vector.Result{}, invalid("collection", "string", "empty", "collection is required")
	}
	var readable []string
	for _, col := range q.Collections {
		col = strings.TrimSpace(col)
		if col == "" {
			return vector.Result{}, invalid("collection", "string", "empty", "collection is required")
		}
		if c.May(Read, MemoryResource(col)) {
			readable = append(readable, col)
		}
	}
	if len(readable) == 0 {
		return vector.Result{}, nil
	}
	// A filter on an entity or source the caller may not read matches
	// nothing, exactly as one on a missing id: existence does not leak.
	if q.SourceID != "" && !c.May(Read, ResourceSources) {
		return vector.Result{}, nil
	}
	if q.EntityID != "" {
		if err := s.checkLinks(ctx, c, []string{q.EntityID}, ""); errors.Is(err, ErrEntityNotFound) {
			return vector.Result{}, nil
		} else if err != nil {
			return vector.Result{}, err
		}
	}
	types, err := s.memoryReadableTypes(ctx, c)
	if err != nil {
		return vector.Result{}, err
	}
	vq := vector.Query{
		Filter: vector.Filter{
			UserID: c.UserID, Collections: readable, Keywords: vector.Terms(q.Keywords), Tags: q.Tags,
			OccurredFrom: q.From, OccurredTo: q.To, MinConfidence: q.MinConfidence, EntityID: q.EntityID,
			SourceID: q.SourceID, Metadata: q.Metadata, ReadableTypes: types,
		},
		MinSimilarity: q.MinSimilarity, Sort: q.Sort, Ascending: q.Ascending, Limit: q.Limit, Offset: q.Offset,
	}
	if vq.MinSimilarity == nil {
		d := s.DefaultMinSimilarity()
		vq.MinSimilarity = &d
	}
	if strings.TrimSpace(q.Query) != "" {
		vq.Text = q.Query
		if d := s.embedder.Dimension(); d > 0 {
			// The store embeds the query while it runs the text signal.
			vq.Space = vector.Space{Embedder: s.embedder.Name(), Dimension: d}
			vq.Embed = func(ctx context.Context) ([]float32, error) {
				vec, _, err := s.embed(ctx, q.Query)
				return vec, err
			}
		} else {
			// A provider whose dimension is not known yet (not probed)
			// tells it with its first vector.
			vec, space, err := s.embed(ctx, q.Query)
			if err != nil {
				return vector.Result{}, err
			}
			vq.Vector, vq.Space = vec, space
		}
	}
	res, err := s.memories.Search(ctx, vq)
	if err != nil {
		return vector.Result{}, memoryError(err)
	}
	if err := s.redactLinks(ctx, c, res.Hits); err != nil {
		return vector.Result{}, err
	}
	return res, nil
}

// redactLinks removes from hits the links the caller may not follow: entity
// ids of types it may not read (or that no longer exist), and the source
// without sources read. A readable memory must not reveal what it points to
// beyond the caller's consent.
func (s *Service) redactLinks(ctx context.Context, c Caller, hits []vector.Hit) error {
	var ids []string
	for i := range hits {
		ids = append(ids, hits[i].EntityIDs...)
		if !c.May(Read, ResourceSources) {
			hits[i].SourceID = ""
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ok := map[string]bool{}
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		found, err := tx.Entities(ctx, c.UserID, slices.Compact(slices.Sorted(slices.Values(ids))))
		for _, e := range found {
			ok[e.ID] = c.readable(e.Type)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].EntityIDs = slices.DeleteFunc(slices.Clone(hits[i].EntityIDs), func(id string) bool { return !ok[id] })
	}
	return nil
}

// MemoryCollections returns the user's collections the caller may read,
// with their counts and embedding spaces.
func (s *Service) MemoryCollections(ctx context.Context, c Caller) ([]vector.Collection, error) {
	if s.memories == nil {
		return nil, ErrMemoriesUnavailable
	}
	types, err := s.memoryReadableTypes(ctx, c)
	if err != nil {
		return nil, err
	}
	// The counts leave out the memories the caller may not read (those of
	// files holding types it may not read), as searches do.
	all, err := s.memories.Collections(ctx, c.UserID, types)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, col := range all {
		if c.May(Read, MemoryResource(col.Name)) {
			out = append(out, col)
		}
	}
	return out, nil
}

// InsightRequest is an insight as Arkiver's store_insight gives it.
type InsightRequest struct {
	// FileID is the source the insight is derived from; it must exist.
	FileID     string
	Title      string
	Content    string
	SourceLLM  string
	Tags       []string
	Entities   map[string]any
	Citations  []string
	Confidence *float64
	PageNumber *float64
	CaseID     string
}

// Metadata keys under which an insight keeps its Arkiver fields.
const (
	insightSourceLLM  = "source_llm"
	insightEntities   = "entities"
	insightCitations  = "citations"
	insightPageNumber = "page_number"
	insightCaseID     = "case_id"
)

// StoreInsight stores an insight as a memory of InsightsCollection.
func (s *Service) StoreInsight(ctx context.Context, c Caller, r InsightRequest) (vector.Memory, error) {
	switch {
	case strings.TrimSpace(r.FileID) == "":
		return vector.Memory{}, invalid("fileId", "string", "empty", "fileId is required")
	case strings.TrimSpace(r.Title) == "":
		return vector.Memory{}, invalid("insight.title", "string", "empty", "title is required")
	case strings.TrimSpace(r.Content) == "":
		return vector.Memory{}, invalid("insight.content", "string", "empty", "content is required")
	case strings.TrimSpace(r.SourceLLM) == "":
		return vector.Memory{}, invalid("insight.sourceLLM", "string", "empty", "sourceLLM is required")
	}
	if err := s.checkFieldSizes("insight", map[string]any{"entities": r.Entities, "citations": r.Citations}); err != nil {
		return vector.Memory{}, err
	}
	meta := map[string]any{insightSourceLLM: r.SourceLLM}
	if r.Entities != nil {
		meta[insightEntities] = r.Entities
	}
	if r.Citations != nil {
		meta[insightCitations] = r.Citations
	}
	if r.PageNumber != nil {
		meta[insightPageNumber] = *r.PageNumber
	}
	if r.CaseID != "" {
		meta[insightCaseID] = r.CaseID
	}
	m, err := s.SaveMemory(ctx, c, MemoryRequest{
		Collection: InsightsCollection, Text: r.Content, Title: r.Title, Tags: r.Tags, Confidence: r.Confidence,
		Metadata: meta, SourceID: r.FileID,
	})
	return m.Memory, err
}

// Insight is a stored insight in Arkiver's shape.
type Insight struct {
	InsightRequest
	ID        string
	CreatedAt time.Time
	// Score and Signals are set when the query had keywords.
	Score   float64
	Signals []vector.Signal
}

// InsightFromMemory reads an insight back from its memory.
func InsightFromMemory(m vector.Memory) Insight {
	in := Insight{ID: m.ID, CreatedAt: m.CreatedAt, InsightRequest: InsightRequest{
		FileID: m.SourceID, Title: m.Title, Content: m.Text, Tags: m.Tags, Confidence: m.Confidence,
	}}
	in.SourceLLM, _ = m.Metadata[insightSourceLLM].(string)
	in.Entities, _ = m.Metadata[insightEntities].(map[string]any)
	if cs, ok := m.Metadata[insightCitations].([]any); ok {
		for _, c := range cs {
			if s, ok := c.(string); ok {
				in.Citations = append(in.Citations, s)
			}
		}
	}
	if p, ok := m.Metadata[insightPageNumber].(float64); ok {
		in.PageNumber = &p
	}
	in.CaseID, _ = m.Metadata[insightCaseID].(string)
	return in
}

// InsightQuery are Arkiver's query_insights filters.
type InsightQuery struct {
	// Keywords, when set, rank insights by a hybrid search for them.
	Keywords      string
	SourceLLM     string
	Tags          []string
	FileID        string
	CaseID        string
	From, To      time.Time
	MinConfidence *float64
	Sort          vector.SortField
	Ascending     bool
	Limit, Offset int
}

// QueryInsights searches or lists insights.
func (s *Service) QueryInsights(ctx context.Context, c Caller, q InsightQuery) ([]Insight, vector.Result, error) {
	meta := map[string]string{}
	if q.SourceLLM != "" {
		meta[insightSourceLLM] = q.SourceLLM
	}
	if q.CaseID != "" {
		meta[insightCaseID] = q.CaseID
	}
	res, err := s.SearchMemories(ctx, c, MemoryQuery{
		Collections: []string{InsightsCollection}, Query: q.Keywords, Tags: q.Tags, From: q.From, To: q.To,
		MinConfidence: q.MinConfidence, SourceID: q.FileID, Metadata: meta, Sort: q.Sort, Ascending: q.Ascending,
		Limit: q.Limit, Offset: q.Offset,
	})
	if err != nil {
		return nil, vector.Result{}, err
	}
	out := make([]Insight, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = InsightFromMemory(h.Memory)
		out[i].Score, out[i].Signals = h.Score, h.Signals
	}
	return out, res, nil
}

// Reembedded reports the rebuild of one collection.
type Reembedded struct {
	UserID     string
	Collection string
	From       vector.Space
	// Count is how many memories got new vectors; 0 when the collection
	// was already in the embedder's space.
	Count int
}

// Reembed rebuilds, with the service's embedder, the vectors of every
// collection (of every user) whose space is another embedder's, or of the
// collections named collection when it is not empty. It is a maintenance
// operation, run by `cairn reembed` after a provider change, and not
// subject to consent.
func (s *Service) Reembed(ctx context.Context, collection string) ([]Reembedded, error) {
	if s.memories == nil {
		return nil, ErrMemoriesUnavailable
	}
	all, err := s.memories.AllCollections(ctx)
	if err != nil {
		return nil, err
	}
	embed := func(ctx context.Context, ms []vector.Memory) ([][]float32, error) {
		texts := make([]string, len(ms))
		for i, m := range ms {
			texts[i] = memoryText(m.Title, m.Text)
		}
		vecs, err := s.embedder.Embed(ctx, texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &EmbedderError{Embedder: s.embedder.Name(), Err: err}
		}
		return vecs, nil
	}
	var out []Reembedded
	for _, c := range all {
		if collection != "" && c.Collection != collection {
			continue
		}
		n, err := s.memories.Reembed(ctx, c.UserID, c.Collection, s.embedder.Name(), embed)
		if err != nil {
			return out, fmt.Errorf("reembed %s of user %s: %w", c.Collection, c.UserID, err)
		}
		out = append(out, Reembedded{UserID: c.UserID, Collection: c.Collection, From: c.Space, Count: n})
	}
	return out, nil
}

// memoryText is what a memory's vector embeds: its title and text.
func memoryText(title, text string) string { return strings.TrimSpace(title + "\n" + text) }

// MemoryText is what a memory's vector embeds, for code that embeds
// memories outside the service (an import of an export without vectors).
func MemoryText(title, text string) string { return memoryText(title, text) }
