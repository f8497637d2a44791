package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Limits of get_user_context.
const (
	DefaultContextBudget = 2000
	MinContextBudget     = 200
	MaxContextBudget     = 16000
	// ContextTopEntities and ContextRecentMemories are how many entities
	// and memories a context load ranks, as the Epitome specification says.
	ContextTopEntities    = 20
	ContextRecentMemories = 10
	// MaxContextCandidates bounds the entities ranked: the most recently
	// observed ones, when a user has more.
	MaxContextCandidates = 20000
	// MaxTopicCandidates bounds the entities embedded for topic
	// similarity: the best by the other signals, plus those whose text
	// contains a word of the topic.
	MaxTopicCandidates = 1000
	maxTopicLen        = 512
)

// contextLimits are the bounds of a context load that depend on how many
// entities a user has: MaxContextCandidates, MaxTopicCandidates and the
// keyword scan's reads (topicScanBatch, topicScanMaxBatch). A Service uses
// defaultContextLimits; they are fields rather than constants only so that
// internal tests can cross every bound with a graph of a few hundred
// entities instead of thousands (limits_internal_test.go).
type contextLimits struct {
	candidates      int // entities ranked
	topicCandidates int // entities embedded for topic similarity, and as many more by keyword
	scanBatch       int // the keyword scan's first read
	scanMaxBatch    int // the keyword scan's largest read
}

var defaultContextLimits = contextLimits{candidates: MaxContextCandidates, topicCandidates: MaxTopicCandidates,
	scanBatch: topicScanBatch, scanMaxBatch: topicScanMaxBatch}

// MemoryIndex is what context loading needs from the memory store. Both
// methods return only what the caller may read. The memory store
// implements it; until it is configured, context loading says that
// memories are not available.
type MemoryIndex interface {
	// Collections returns the caller's memory collections with how many
	// memories each holds.
	Collections(ctx context.Context, c Caller) ([]MemoryCollection, error)
	// Recent returns the caller's n most recent memories, newest first.
	Recent(ctx context.Context, c Caller, n int) ([]MemorySummary, error)
}

// MemoryCollection is a memory collection and its size.
type MemoryCollection struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// MemorySummary is a memory as context loading shows it. Memory text is
// data written by agents, never instructions.
type MemorySummary struct {
	ID         string    `json:"memory_id"`
	Collection string    `json:"collection"`
	Title      string    `json:"title,omitempty" jsonschema:"the memory's title, or the start of its text"`
	Text       string    `json:"text,omitempty" jsonschema:"the memory's text (cut to 500 characters); left out when the budget is short"`
	CreatedAt  time.Time `json:"created_at"`
}

// TypeCount is one entity type of the inventory.
type TypeCount struct {
	EntityType string `json:"entity_type"`
	Count      int    `json:"count"`
}

// ContextEntity is a ranked entity: its name first, then as many facts
// (snapshot fields) as the budget allows.
type ContextEntity struct {
	EntityID   string         `json:"entity_id"`
	EntityType string         `json:"entity_type"`
	Name       string         `json:"name"`
	Score      float64        `json:"score" jsonschema:"composite score 0..1: recency, observation count, degree, and topic similarity when a topic is given"`
	Facts      map[string]any `json:"facts,omitempty" jsonschema:"snapshot fields; long strings are cut"`
	// RawFields names the facts shown that the entity's schema does not
	// name (yet): what its sources gave beyond it, the latest value of
	// each (raw fragments).
	RawFields []string `json:"raw_fields,omitempty" jsonschema:"the facts shown that the schema does not name (yet): the latest value your sources gave"`
	// FactsOmitted counts the fields left out for the budget.
	FactsOmitted int `json:"facts_omitted,omitempty"`
}

// MemorySection is the memory part of a context load.
type MemorySection struct {
	Available   bool               `json:"available" jsonschema:"false when no memory store is configured"`
	Collections []MemoryCollection `json:"collections"`
	Recent      []MemorySummary    `json:"recent"`
}

// Omissions counts what a context load left out to stay within its budget
// (or because there was more than it shows).
type Omissions struct {
	ProfileMembers int `json:"profile_members" jsonschema:"top-level profile members left out"`
	EntityTypes    int `json:"entity_types"`
	Collections    int `json:"collections"`
	Entities       int `json:"entities" jsonschema:"readable entities not shown (beyond the top 20, or over budget)"`
	EntityFacts    int `json:"entity_facts" jsonschema:"fields of shown entities left out"`
	Memories       int `json:"memories" jsonschema:"of the last 10 memories, those not shown"`
	MemoryTexts    int `json:"memory_texts" jsonschema:"shown memories whose text was left out"`
}

// UserContext is what get_user_context returns, in the shape it returns
// it: its JSON encoding is what the budget counts.
type UserContext struct {
	BudgetTokens int    `json:"budget_tokens"`
	TokensUsed   int    `json:"tokens_used" jsonschema:"this response's size in tokens, counted as ceil(bytes of JSON / 3)"`
	Topic        string `json:"topic,omitempty"`
	// Profile is the user's profile document (members that fit).
	Profile     map[string]any  `json:"profile"`
	EntityTypes []TypeCount     `json:"entity_types" jsonschema:"entity types the caller may read, with how many entities each has"`
	Memories    MemorySection   `json:"memories"`
	Entities    []ContextEntity `json:"entities" jsonschema:"the top entities by composite score, best first"`
	Omitted     Omissions       `json:"omitted"`
	Truncated   bool            `json:"truncated" jsonschema:"true when anything was left out for the budget"`
	Notes       []string        `json:"notes,omitempty"`
}

// ContextRequest asks for a context load.
type ContextRequest struct {
	// Topic, when set, ranks entities by similarity to it as well.
	Topic string
	// BudgetTokens bounds the response; 0 means DefaultContextBudget.
	BudgetTokens int
	// TypesOnly loads the type inventory alone (entity_types, with the
	// counts of what was left out): what a completion of an entity type
	// or a listing of resources needs, without reading the profile, the
	// memories or a single entity; so it needs no read access to the
	// profile either, only to the types it shows.
	TypesOnly bool
}

// Tokens is the conservative token count Cairn budgets with: one token per
// three bytes of JSON, rounded up. Tokenisers of current models average
// about four bytes per token on English and JSON, so the count errs high.
func Tokens(jsonBytes int) int { return (jsonBytes + 2) / 3 }

// UserContext loads what an agent should know about the user at the start
// of a conversation, within a token budget: the profile, the inventory of
// entity types with counts, the memory collections with counts and the last
// memories, and the top entities by composite score (see ranking),
// names first and then facts. Everything the caller may not read is left
// out. It needs read access to the profile, as the specification says.
func (s *Service) UserContext(ctx context.Context, c Caller, req ContextRequest) (UserContext, error) {
	// The type inventory alone (resources/list, completions) shows the
	// types the caller may read and nothing of the profile: an agent
	// that may read companies but not the profile still lists them.
	if err := c.need(Read, ResourceProfile); err != nil && !req.TypesOnly {
		return UserContext{}, err
	}
	budget := cmp.Or(req.BudgetTokens, DefaultContextBudget)
	if budget < MinContextBudget || budget > MaxContextBudget {
		return UserContext{}, invalid("budget_tokens", fmt.Sprintf("integer %d..%d", MinContextBudget, MaxContextBudget), "number",
			"must be between %d and %d", MinContextBudget, MaxContextBudget)
	}
	topic := strings.TrimSpace(req.Topic)
	if len(topic) > maxTopicLen {
		return UserContext{}, invalid("topic", fmt.Sprintf("at most %d bytes", maxTopicLen), "string", "is %d bytes long", len(topic))
	}
	if req.TypesOnly {
		in, err := s.contextTypes(ctx, c)
		if err != nil {
			return UserContext{}, fmt.Errorf("knowledge: user context: %w", err)
		}
		return pack(budget, "", in)
	}
	// The profile, the memories and the graph are independent: they are
	// read at once, and so is the topic embedded (a model takes
	// milliseconds of CPU, a provider a round trip), which leaves a call
	// as long as its longest part rather than their sum.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var in contextInput
	var topicVec *pending[[]float32]
	if topic != "" {
		topicVec = goPending(func() ([]float32, error) { return s.embedTopic(ctx, topic) })
	}
	var profileNotes, memoryNotes []string
	var profileErr, memoryErr error
	var wg sync.WaitGroup
	wg.Go(func() { in.profile, profileNotes, profileErr = s.contextProfile(ctx, c) })
	wg.Go(func() { memoryNotes, memoryErr = s.contextMemories(ctx, c, &in) })
	graphErr := s.contextGraph(ctx, c, topic, topicVec, &in)
	if graphErr == nil {
		graphErr = s.contextRawFields(ctx, c, &in)
	}
	if graphErr != nil {
		cancel()
	}
	wg.Wait()
	if topicVec != nil {
		// Not needed when there is no entity, and then its error is not
		// reported either, as before; it must end before the call does.
		topicVec.wait(context.Background())
	}
	// The graph's error first: the others may only say that it cancelled
	// them.
	switch {
	case graphErr != nil:
		return UserContext{}, fmt.Errorf("knowledge: user context: %w", graphErr)
	case profileErr != nil:
		return UserContext{}, fmt.Errorf("knowledge: user context: profile: %w", profileErr)
	case memoryErr != nil:
		return UserContext{}, fmt.Errorf("knowledge: user context: memories: %w", memoryErr)
	}
	in.notes = slices.Concat(profileNotes, in.notes, memoryNotes)
	return pack(budget, topic, in)
}

// contextTypes fills the type inventory alone, from the count of each
// type's entities: the readable types of the user's schemas and of the
// entities, most entities first, as contextGraph lists them.
func (s *Service) contextTypes(ctx context.Context, c Caller) (contextInput, error) {
	in := contextInput{profile: map[string]any{}}
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		set, err := s.schemas.For(ctx, c.UserID)
		if err != nil {
			return err
		}
		counts, err := tx.EntityTypeCounts(ctx, c.UserID)
		if err != nil {
			return err
		}
		in.types, in.readableEntities = readableTypes(c, set.Types(), counts)
		return nil
	})
	return in, err
}

// readableTypes lists the types of schemaTypes and of counts that the
// caller may read, with their counts, most entities first (then by name),
// and how many entities they hold in all.
func readableTypes(c Caller, schemaTypes []string, counts map[string]int) ([]TypeCount, int) {
	types := append(slices.Clone(schemaTypes), slices.Collect(maps.Keys(counts))...)
	slices.Sort(types)
	var out []TypeCount
	n := 0
	for _, t := range slices.Compact(types) {
		if c.readable(t) {
			out = append(out, TypeCount{EntityType: t, Count: counts[t]})
			n += counts[t]
		}
	}
	slices.SortStableFunc(out, func(a, b TypeCount) int { return cmp.Compare(b.Count, a.Count) })
	return out, n
}

// contextProfile reads the caller's profile, or says that there is no
// profile store.
func (s *Service) contextProfile(ctx context.Context, c Caller) (map[string]any, []string, error) {
	if s.profiles == nil {
		return map[string]any{}, []string{"no profile store is configured"}, nil
	}
	p, err := s.profiles.Profile(ctx, c.UserID)
	if err != nil {
		return nil, nil, err
	}
	return p.Data, nil, nil
}

// contextInput is everything a context load found, before packing.
type contextInput struct {
	profile          map[string]any
	types            []TypeCount
	memoriesAvail    bool
	collections      []MemoryCollection
	recent           []MemorySummary
	ranked           []rankedEntity // best first, at most ContextTopEntities
	readableEntities int            // all readable, live entities
	notes            []string
}

// contextGraph fills the type inventory and the ranked entities. It ranks
// from the entities' statistics and reads the snapshots of only the
// entities it returns and, with a topic, of the candidates of topic
// similarity (see ranking). topicVec is the topic's embedding, being
// computed; nil without a topic.
func (s *Service) contextGraph(ctx context.Context, c Caller, topic string, topicVec *pending[[]float32], in *contextInput) error {
	var r *ranking
	var topicIdx []int
	var stored *pending[[]vector.EntityEmbedding]
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		set, err := s.schemas.For(ctx, c.UserID)
		if err != nil {
			return err
		}
		counts, stats, err := contextStats(ctx, tx, c, set.Types(), s.limits.candidates, topic != "")
		if err != nil {
			return err
		}
		in.ranked = nil
		in.types, in.readableEntities = readableTypes(c, set.Types(), counts)
		r = newRanking(c.UserID, s.clock(), stats, degrees(c, stats), s.limits)
		r.textCache = s.textCache
		if topic != "" {
			topicIdx, stored, err = r.topicCandidates(ctx, tx, topic, s.fetchStored)
			return err
		}
		best := r.best()
		if err := r.read(ctx, tx, best); err != nil {
			return err
		}
		in.ranked = r.ranked(best)
		return nil
	})
	if err != nil {
		if stored != nil {
			stored.wait(context.Background())
		}
		return err
	}
	if in.readableEntities > s.limits.candidates {
		in.notes = append(in.notes, fmt.Sprintf("only the %d most recently observed entities were ranked", s.limits.candidates))
	}
	if topic == "" || len(r.stats) == 0 {
		return nil
	}
	// Outside the transaction: its connection is not held while the
	// stored vectors are read on another.
	topicVecs := s.knownVectors(ctx, r, topicIdx, stored)
	var unknown []int
	for k, i := range topicIdx {
		if topicVecs[k] == nil {
			unknown = append(unknown, i)
		}
	}
	if unknown = r.untexted(unknown); len(unknown) > 0 {
		// Candidates with neither a cached nor a stored vector are
		// embedded from their text: those whose snapshot the text hash
		// of their signature spared, and whose text the text cache did
		// not hold, are read now.
		err := s.graph.View(ctx, func(tx *graph.Tx) error {
			_, err := r.readFound(ctx, tx, unknown)
			return err
		})
		if err != nil {
			return err
		}
	}
	if err := s.setTopic(ctx, r, topicVec, topicIdx, topicVecs); err != nil {
		return err
	}
	best := r.best()
	if missing := r.missing(best); len(missing) > 0 {
		// Entities outside the topic candidates have no topic similarity
		// and rarely rank; when they do (ties), their snapshots are read
		// now.
		if err := s.graph.View(ctx, func(tx *graph.Tx) error { return r.read(ctx, tx, missing) }); err != nil {
			return err
		}
	}
	in.ranked = r.ranked(best)
	return nil
}

// contextRawFields gives the ranked entities what their sources gave that
// their schemas do not name yet (RawFieldsOf), for the packer to show as
// facts marked raw: fields a type's first store did not bring stay out of
// its schema until evolution promotes them, and what a source said is a
// fact an agent should see.
func (s *Service) contextRawFields(ctx context.Context, c Caller, in *contextInput) error {
	if len(in.ranked) == 0 {
		return nil
	}
	ents := make([]graph.Entity, len(in.ranked))
	for i, r := range in.ranked {
		ents[i] = r.entity
	}
	raw, err := s.RawFieldsOf(ctx, c, ents)
	if err != nil {
		return err
	}
	for i := range in.ranked {
		in.ranked[i].raw = raw[in.ranked[i].entity.ID]
	}
	return nil
}

// contextStats returns how many unmerged entities the user has of each
// type, and the statistics of those of them the caller may read (the limit
// most recently observed; MaxContextCandidates but in tests). Below limit
// entities in all, one ListEntityStats of every type gives both, and
// consent filters the types here; otherwise the counts are read apart and
// the list is filtered by the readable types in the backend, as a user
// with more entities than are ranked needs (one read more for those).
// textSigs asks for the entities' text signatures (a topic's keyword
// scan uses them).
func contextStats(ctx context.Context, tx *graph.Tx, c Caller, schemaTypes []string, limit int, textSigs bool) (map[string]int, []graph.EntityStat, error) {
	all, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: c.UserID, Page: graph.Page{Limit: limit}, TextSigs: textSigs})
	if err != nil {
		return nil, nil, err
	}
	if len(all) < limit {
		counts := map[string]int{}
		readable := map[string]bool{}
		stats := all[:0]
		for _, e := range all {
			counts[e.Type]++
			ok, seen := readable[e.Type]
			if !seen {
				ok = c.readable(e.Type)
				readable[e.Type] = ok
			}
			// Consent filters by type here, before anything is ranked.
			if ok {
				stats = append(stats, e)
			}
		}
		return counts, stats, nil
	}
	counts, err := tx.EntityTypeCounts(ctx, c.UserID)
	if err != nil {
		return nil, nil, err
	}
	types := append(slices.Clone(schemaTypes), slices.Collect(maps.Keys(counts))...)
	slices.Sort(types)
	readable := []string{} // non-nil: no readable type means no entity
	for _, t := range slices.Compact(types) {
		if c.readable(t) {
			readable = append(readable, t)
		}
	}
	stats, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: c.UserID, Types: readable, Page: graph.Page{Limit: limit}, TextSigs: textSigs})
	return counts, stats, err
}

// pending is a value being computed by a goroutine of its own.
type pending[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// goPending starts computing f.
func goPending[T any](f func() (T, error)) *pending[T] {
	p := &pending[T]{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.v, p.err = f()
	}()
	return p
}

// wait returns the value once it is computed, or ctx's error if ctx ends
// first.
func (p *pending[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-p.done:
		return p.v, p.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// degrees counts each candidate's live relationships whose other end the
// caller may read, by candidate.
func degrees(c Caller, cands []graph.EntityStat) []int {
	out := make([]int, len(cands))
	readable := map[string]bool{}
	for i, e := range cands {
		for _, d := range e.Degrees {
			ok, seen := readable[d.Type]
			if !seen {
				ok = c.readable(d.Type)
				readable[d.Type] = ok
			}
			if ok {
				out[i] += d.Count
			}
		}
	}
	return out
}

// contextMemories fills the memory section through the memory index,
// keeping only what the caller may read, and returns its notes.
func (s *Service) contextMemories(ctx context.Context, c Caller, in *contextInput) ([]string, error) {
	if s.memoryIndex == nil {
		return []string{"no memory store is configured: there are no memory collections or memories to show"}, nil
	}
	in.memoriesAvail = true
	var cols []MemoryCollection
	var recent []MemorySummary
	var err error
	if x, ok := s.memoryIndex.(storeIndex); ok {
		cols, recent, err = x.load(ctx, c, ContextRecentMemories)
	} else {
		cols, err = s.memoryIndex.Collections(ctx, c)
		if err == nil {
			recent, err = s.memoryIndex.Recent(ctx, c, ContextRecentMemories)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, col := range cols {
		if c.May(Read, MemoryResource(col.Name)) {
			in.collections = append(in.collections, col)
		}
	}
	slices.SortStableFunc(in.collections, func(a, b MemoryCollection) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	for _, m := range recent {
		if c.May(Read, MemoryResource(m.Collection)) && len(in.recent) < ContextRecentMemories {
			in.recent = append(in.recent, m)
		}
	}
	return nil, nil
}

// errOverBudget is returned by pack when even an empty context does not fit,
// which the budget bounds make impossible; it guards the invariant.
var errOverBudget = errors.New("knowledge: user context: the empty context exceeds the budget")
