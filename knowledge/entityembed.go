package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// Entity embeddings.
//
// Every entity is embedded as graph.EntityText: its type (underscores as
// spaces), a colon, its canonical name, then its scalar snapshot values
// (strings and numbers, by field name), separated by "; ", cut to
// graph.MaxEntityText bytes. For example
//
//	company: Acme Corp; Lyon; 120; active
//
// The text depends only on the snapshot, so the same entity gives the same
// text on every machine. Its embedding is stored with the embedder's space
// and the text's SHA-256 (vector.EntityStore), so that a reader uses a
// stored vector only when it is of the configured embedder and of the
// entity as it is now.
//
// The graph writes that change a snapshot (recompute, which store,
// correct, merge_entities and the review_memories resolutions all go
// through, and a merge's marking of the merged entity) enqueue the entity
// in the graph's outbox in the same transaction. The outbox worker
// (RunEntityEmbeddings) then claims entries in batches, reads each entity
// as it is at that time, embeds the texts that changed, writes the vectors
// (deleting those of merged or missing entities) and acknowledges the
// entries. A process that stops between the graph write and the vector
// write leaves the entry, which the next start drains.

// Defaults of the outbox worker.
const (
	// EntityEmbedBatch is how many outbox entries the worker claims, and
	// how many texts it embeds, at once.
	EntityEmbedBatch = 64
	// EntityEmbedLease is how long a claim holds its entries: longer than
	// one batch can take (an OpenAI-compatible provider retries with
	// backoff), after which another worker may take them over.
	EntityEmbedLease = 2 * time.Minute
	// EntityEmbedPoll is how often an idle worker looks for entries that
	// other processes enqueued, or whose lease ran out; entries of its own
	// process wake it at once.
	EntityEmbedPoll = 10 * time.Second
)

// EntityEmbedStats counts what a drain or a rebuild did.
type EntityEmbedStats struct {
	// Entries is how many outbox entries were settled.
	Entries int
	// Embedded counts the entities whose vector was (re)computed and
	// written; Unchanged those whose stored vector was current already;
	// Removed the vectors deleted because their entity was merged or is
	// gone.
	Embedded, Unchanged, Removed int
}

func (a *EntityEmbedStats) add(b EntityEmbedStats) {
	a.Entries += b.Entries
	a.Embedded += b.Embedded
	a.Unchanged += b.Unchanged
	a.Removed += b.Removed
}

// enqueueEmbedding records in tx that an entity's embedding must be rebuilt;
// it does nothing when the service keeps no entity embeddings.
func (s *Service) enqueueEmbedding(ctx context.Context, tx *graph.Tx, userID string, ids ...string) error {
	if s.entityVecs == nil {
		return nil
	}
	return tx.EnqueueOutbox(ctx, userID, ids, s.clock())
}

// entityTextHash identifies an entity's embedding text.
func entityTextHash(text string) string { return sha256Hex([]byte(text)) }

// inEmbedderSpace reports whether a stored vector of space sp is one of the
// configured embedder's: its name, and its dimension once known.
func (s *Service) inEmbedderSpace(sp vector.Space) bool {
	dim := s.embedder.Dimension()
	return sp.Embedder == s.embedder.Name() && (dim == 0 || sp.Dimension == dim)
}

// DrainEntityOutbox settles every outbox entry it can claim, batch after
// batch, until none is left, and says what it did. Entries that another
// worker holds are left to it. It is what the worker runs, and what a
// start runs first to repair what a stopped process left.
func (s *Service) DrainEntityOutbox(ctx context.Context) (EntityEmbedStats, error) {
	return s.drainEntityOutbox(ctx, s.embedder)
}

// drainEntityOutbox is DrainEntityOutbox embedding with e: the service's
// embedder, or in the worker its background embedder.
func (s *Service) drainEntityOutbox(ctx context.Context, e embed.Embedder) (EntityEmbedStats, error) {
	var total EntityEmbedStats
	if s.entityVecs == nil {
		return total, unavailable("entity embeddings")
	}
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		// Claims, acknowledgements and releases are not cut short when
		// ctx ends: a claim that the database made but whose answer was
		// lost would hold its entries until the lease ends.
		entries, err := outboxOp(ctx, func(ctx context.Context) ([]graph.OutboxEntry, error) {
			return s.graph.ClaimOutbox(ctx, graph.OutboxClaim{Limit: EntityEmbedBatch, Lease: EntityEmbedLease, Now: s.clock()})
		})
		if err != nil {
			return total, fmt.Errorf("knowledge: entity embeddings: %w", err)
		}
		if len(entries) == 0 {
			return total, nil
		}
		byUser := map[string][]string{}
		var users []string
		for _, e := range entries {
			if byUser[e.UserID] == nil {
				users = append(users, e.UserID)
			}
			byUser[e.UserID] = append(byUser[e.UserID], e.EntityID)
		}
		var batch EntityEmbedStats
		for _, u := range users {
			st, err := s.refreshEmbeddings(ctx, e, u, byUser[u])
			if err == nil {
				batch.add(st)
				continue
			}
			// Leave the entries to be claimed again at once: by the next
			// poll, or by the next start when ctx ended because the
			// process stops. Were the release lost too, the lease ends.
			if _, rerr := outboxOp(ctx, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, s.graph.ReleaseOutbox(ctx, entries)
			}); rerr != nil {
				s.log.Warn("entity embeddings: release outbox", "err", rerr)
			}
			return total, err
		}
		if _, err := outboxOp(ctx, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, s.graph.AckOutbox(ctx, entries)
		}); err != nil {
			return total, fmt.Errorf("knowledge: entity embeddings: %w", err)
		}
		total.add(batch)
		total.Entries += len(entries)
	}
}

// outboxOpTimeout bounds one outbox statement that runs past its caller's
// cancellation.
const outboxOpTimeout = 30 * time.Second

// outboxOp runs fn with ctx's values but not its cancellation, bounded by
// outboxOpTimeout.
func outboxOp[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outboxOpTimeout)
	defer cancel()
	return fn(ctx)
}

// refreshEmbeddings brings the stored embeddings of one user's entities up
// to date with the entities as they are now: it is idempotent, and
// whatever an outbox entry said, it reads the current state.
func (s *Service) refreshEmbeddings(ctx context.Context, embedder embed.Embedder, userID string, ids []string) (EntityEmbedStats, error) {
	var st EntityEmbedStats
	var ents []graph.Entity
	if err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		ents, err = tx.Entities(ctx, userID, ids)
		return err
	}); err != nil {
		return st, fmt.Errorf("knowledge: entity embeddings: read entities: %w", err)
	}
	live := map[string]graph.Entity{}
	for _, e := range ents {
		if !e.Merged() {
			live[e.ID] = e
		}
	}
	var gone, liveIDs []string
	for _, id := range ids {
		if _, ok := live[id]; ok {
			liveIDs = append(liveIDs, id)
		} else {
			gone = append(gone, id)
		}
	}
	stored, err := s.entityVecs.Get(ctx, userID, liveIDs)
	if err != nil {
		return st, fmt.Errorf("knowledge: entity embeddings: %w", err)
	}
	current := map[string]vector.EntityEmbedding{}
	for _, e := range stored {
		current[e.EntityID] = e
	}
	name := embedder.Name()
	var todo []vector.EntityEmbedding
	var texts []string
	for _, id := range liveIDs {
		text := graph.EntityText(live[id])
		hash := entityTextHash(text)
		if old, ok := current[id]; ok && old.Space.Embedder == name && old.TextHash == hash {
			st.Unchanged++
			continue
		}
		todo = append(todo, vector.EntityEmbedding{UserID: userID, EntityID: id, TextHash: hash})
		texts = append(texts, text)
	}
	for start := 0; start < len(todo); start += EntityEmbedBatch {
		end := min(start+EntityEmbedBatch, len(todo))
		vecs, err := embedder.Embed(ctx, texts[start:end])
		if err != nil {
			return st, &EmbedderError{Embedder: name, Err: err}
		}
		if len(vecs) != end-start {
			return st, &EmbedderError{Embedder: name, Err: fmt.Errorf("%d vectors for %d texts", len(vecs), end-start)}
		}
		for i, v := range vecs {
			e := &todo[start+i]
			e.Embedding, e.Space = v, vector.Space{Embedder: name, Dimension: len(v)}
		}
	}
	if err := s.entityVecs.Put(ctx, todo...); err != nil {
		return st, fmt.Errorf("knowledge: entity embeddings: %w", err)
	}
	if err := s.entityVecs.Delete(ctx, userID, gone); err != nil {
		return st, fmt.Errorf("knowledge: entity embeddings: %w", err)
	}
	st.Embedded, st.Removed = len(todo), len(gone)
	return st, nil
}

// RunEntityEmbeddings keeps entity embeddings current until ctx ends: it
// first drains what the outbox holds (left by a process that stopped before
// its embeddings were written, or by the migration that introduced them)
// and logs how many entries it repaired, then drains again whenever a write
// of this process enqueues entities, and every EntityEmbedPoll. Errors (an
// embedder that does not answer, say) are logged and retried at the next
// poll; the entries stay in the outbox meanwhile, and topic ranking embeds
// the entities it needs itself. A batch cut short when ctx ends is released
// for the next start; one held by a process that died is claimed again
// once its lease (EntityEmbedLease) ends.
func (s *Service) RunEntityEmbeddings(ctx context.Context) {
	if s.entityVecs == nil {
		return
	}
	wake := make(chan struct{}, 1)
	s.graph.OnOutbox(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer s.graph.OnOutbox(nil)
	st, err := s.drainEntityOutbox(ctx, s.bgEmbedder)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("entity embeddings: repair at start", "repaired", st.Entries, "err", err)
	case err == nil:
		s.log.Info("entity embeddings: repaired at start", "repaired", st.Entries,
			"embedded", st.Embedded, "removed", st.Removed, "unchanged", st.Unchanged)
	}
	tick := time.NewTicker(EntityEmbedPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
		if st, err := s.drainEntityOutbox(ctx, s.bgEmbedder); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("entity embeddings", "settled", st.Entries, "err", err)
		}
	}
}

// reembedPage is how many embeddings of another embedder ReembedEntities
// reads at a time.
const reembedEntityPage = 500

// ReembedEntities brings every entity embedding into the configured
// embedder's space, after a provider change: it drains the outbox (so that
// entities without an embedding get one), then rebuilds each stored
// embedding of another embedder from its entity as it is now. Running it
// again does nothing; it may run beside a server, whose worker does the
// same idempotent work.
func (s *Service) ReembedEntities(ctx context.Context) (EntityEmbedStats, error) {
	st, err := s.DrainEntityOutbox(ctx)
	if err != nil {
		return st, err
	}
	name := s.embedder.Name()
	var after vector.EntityKey
	for {
		keys, err := s.entityVecs.Outside(ctx, name, after, reembedEntityPage)
		if err != nil {
			return st, fmt.Errorf("knowledge: reembed entities: %w", err)
		}
		if len(keys) == 0 {
			return st, nil
		}
		for start := 0; start < len(keys); {
			end := start
			for end < len(keys) && keys[end].UserID == keys[start].UserID {
				end++
			}
			ids := make([]string, 0, end-start)
			for _, k := range keys[start:end] {
				ids = append(ids, k.EntityID)
			}
			one, err := s.refreshEmbeddings(ctx, s.embedder, keys[start].UserID, ids)
			if err != nil {
				return st, err
			}
			st.add(one)
			start = end
		}
		after = keys[len(keys)-1]
	}
}
