package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Erasing graph data (issue 37, docs/forgetting.md): an entity with
// everything derived from it, or a source with everything it produced, is
// deleted from the graph, its search indexes and its embeddings; what
// remains is a tombstone (GraphTombstone) with ids, time, actor and reason.
// An entity or source the caller may not read is answered as one that does
// not exist; the caller needs delete on every entity type it touches.

// EraseKind is what Erase erases.
type EraseKind string

// The kinds of Erase.
const (
	EraseEntity EraseKind = "entity"
	EraseSource EraseKind = "source"
)

// MaxEraseBatch is the most ids one Erase takes.
const MaxEraseBatch = 100

// Retraction records that an observation stopped counting: who retracted
// it, when and why. SubjectID is the entity (or relationship) it is about.
type Retraction struct {
	UserID        string
	ObservationID string
	Kind          string // RetractObservation or RetractRelationshipObservation
	SubjectID     string
	SourceID      string
	At            time.Time
	Actor         string
	Reason        string
}

// GraphTombstone is what remains of an erased entity or source: no content.
type GraphTombstone struct {
	UserID   string
	Kind     EraseKind
	ID       string
	ErasedAt time.Time
	Actor    string
	Reason   string
	// Counts are the rows of each kind the erasure removed.
	Counts map[string]int
}

// GraphForgetStore keeps the retractions and tombstones of graph data, and
// drops the contradictions that held erased values. controlplane.Store
// implements it on SQLite and PostgreSQL, beside the contradictions, whose
// RejectedObservations also answers the retracted observations.
type GraphForgetStore interface {
	// Retract records retractions; an observation retracted already keeps
	// its first. It returns how many it recorded.
	Retract(ctx context.Context, rs []Retraction) (int, error)
	// Unretract removes the retractions of these observations and returns
	// how many it removed.
	Unretract(ctx context.Context, userID string, observationIDs []string) (int, error)
	// Retractions returns the retractions of these observations, by id.
	Retractions(ctx context.Context, userID string, observationIDs []string) ([]Retraction, error)
	// AllRetractions returns every retraction of the user, by observation id.
	AllRetractions(ctx context.Context, userID string) ([]Retraction, error)
	// AddGraphTombstones records tombstones; one recorded already is kept.
	AddGraphTombstones(ctx context.Context, ts []GraphTombstone) error
	// GraphTombstones returns the user's tombstones, oldest first.
	GraphTombstones(ctx context.Context, userID string) ([]GraphTombstone, error)
	// EraseContradictions removes the contradictions about entityIDs or
	// naming one of observationIDs, with the rejections and retractions of
	// those entities' and observations', and returns how many
	// contradictions it removed.
	EraseContradictions(ctx context.Context, userID string, entityIDs, observationIDs []string) (int, error)
}

// EraseRequest erases entities or sources.
type EraseRequest struct {
	Kind   EraseKind
	IDs    []string
	Reason string
	// DryRun computes what would go, in a transaction that is then rolled
	// back: nothing changes.
	DryRun bool
}

// EraseResult says what Erase removed (or, for a dry run, would remove).
type EraseResult struct {
	Kind EraseKind
	// IDs are the entities or sources asked for, without repeats.
	IDs []string
	// Entities are every entity erased: those asked for, the duplicates
	// merged into them, and for a source the entities left with no
	// observation.
	Entities []string
	// Recomputed are the entities that lost observations and keep others
	// (a merge target, or an entity a source contributed to): their
	// snapshots were computed again without them.
	Recomputed []string
	// Counts are per kind: entities, observations, raw_fragments,
	// identifiers, timeline_events, relationships (periods),
	// relationship_observations, sources, contradictions,
	// recomputed_entities, files (stored files whose bytes went; a dry
	// run counts the file sources), memories (those naming an erased
	// source).
	Counts map[string]int
	At     time.Time
	DryRun bool
}

// FileEraser removes a stored file's bytes and row once its source is
// erased, and reports whether there was one (files.Service.EraseFile).
type FileEraser func(ctx context.Context, userID, sourceID string) (bool, error)

// SetFileEraser sets what Erase calls for each erased source that is a
// stored file. The files service is made after the knowledge service it
// uses, so it is set after NewService, before the service is shared.
func (s *Service) SetFileEraser(f FileEraser) { s.eraseFile = f }

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("knowledge: dry run")

// Erase erases entities or sources, all or none. Every id must be an
// entity (merged or not) or a source the caller may read, with read on
// every entity type a source produced and on every relationship it
// observed (read on the graph and on both ends' types), else a
// NotFoundError naming it and nothing changes; the caller needs delete on
// each of those types. The answer's relationship counts say only what the
// caller may see (relationshipView).
func (s *Service) Erase(ctx context.Context, c Caller, req EraseRequest) (EraseResult, error) {
	ids, err := eraseIDs(req)
	if err != nil {
		return EraseResult{}, err
	}
	if err := checkReason(req.Reason); err != nil {
		return EraseResult{}, err
	}
	if s.forget == nil && !req.DryRun {
		return EraseResult{}, unavailable("erase (no tombstone store)")
	}
	var mems []string
	if req.Kind == EraseSource {
		if mems, err = s.sourceMemories(ctx, c, ids); err != nil {
			return EraseResult{}, err
		}
	}
	var (
		res   EraseResult
		e     graph.Erasure
		files []string
		vis   relationshipView
	)
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		res = EraseResult{Kind: req.Kind, IDs: ids, At: s.clock(), DryRun: req.DryRun}
		p := erasePlan{erasure: graph.Erasure{UserID: c.UserID}, whole: map[string]bool{}}
		for _, id := range ids {
			var err error
			if req.Kind == EraseEntity {
				err = s.planEntity(ctx, tx, c, id, &p)
			} else {
				err = s.planSource(ctx, tx, c, id, &p)
			}
			if err != nil {
				return err
			}
		}
		if err := orphanSources(ctx, tx, c.UserID, &p); err != nil {
			return err
		}
		if vis, err = visibleRelationships(ctx, tx, c, &p); err != nil {
			return err
		}
		n, err := tx.Erase(ctx, p.erasure)
		if err != nil {
			return err
		}
		if err := s.reduceRelationships(ctx, tx, c.UserID, n.Touched); err != nil {
			return err
		}
		var recomputed []string
		for _, id := range p.survivors {
			if p.whole[id] || slices.Contains(recomputed, id) {
				continue
			}
			if err := s.recomputeOrClear(ctx, tx, c.UserID, id); err != nil {
				return err
			}
			recomputed = append(recomputed, id)
		}
		if err := s.enqueueEmbedding(ctx, tx, c.UserID, p.erasure.EntityIDs...); err != nil {
			return err
		}
		e, files = p.erasure, p.files
		res.Entities, res.Recomputed = orEmptyIDs(p.erasure.EntityIDs), orEmptyIDs(recomputed)
		res.Counts = map[string]int{
			"entities": n.Entities, "observations": n.Observations, "raw_fragments": n.RawFragments,
			"identifiers": n.Identifiers, "timeline_events": n.TimelineEvents, "relationships": n.Relationships,
			"relationship_observations": n.RelationshipObservations, "sources": n.Sources,
			"recomputed_entities": len(recomputed), "contradictions": 0, "files": len(p.files), "memories": len(mems),
		}
		if req.DryRun {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		return vis.redact(res), nil
	}
	if err != nil {
		return EraseResult{}, fmt.Errorf("knowledge: erase: %w", err)
	}
	if err := s.eraseSourceMemories(ctx, c, mems, req.Reason, res); err != nil {
		return EraseResult{}, err
	}
	err = s.afterErase(ctx, c, req, e, files, &res)
	return vis.redact(res), err
}

// sourceMemories returns the ids of the memories that name one of the
// sources (a file's interpretation summary, a memory saved with its
// source): the source's content as much as its observations. A memory the
// caller may not read makes the source one it may not read; one it may
// read needs delete on its collection.
func (s *Service) sourceMemories(ctx context.Context, c Caller, sourceIDs []string) ([]string, error) {
	if s.memories == nil {
		return nil, nil
	}
	colls, err := s.memories.Collections(ctx, c.UserID, nil)
	if err != nil || len(colls) == 0 {
		return nil, err
	}
	names := make([]string, len(colls))
	for i, cl := range colls {
		names[i] = cl.Name
	}
	types, err := s.memoryReadableTypes(ctx, c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, src := range sourceIDs {
		for offset := 0; ; offset += vector.MaxLimit {
			r, err := s.memories.Search(ctx, vector.Query{Filter: vector.Filter{UserID: c.UserID, Collections: names, SourceID: src},
				Limit: vector.MaxLimit, Offset: offset})
			if err != nil {
				return nil, err
			}
			for _, h := range r.Hits {
				if !c.May(Read, MemoryResource(h.Collection)) || !(vector.Filter{ReadableTypes: types}).AdmitsTypes(h.Types) {
					return nil, &NotFoundError{Kind: ErrSourceNotFound, ID: src}
				}
				if err := c.need(Delete, MemoryResource(h.Collection)); err != nil {
					return nil, err
				}
				out = append(out, h.ID)
			}
			if !r.HasMore || len(r.Hits) == 0 {
				break
			}
		}
	}
	return out, nil
}

// eraseSourceMemories erases the memories of erased sources, with the
// contradictions their claims raised, as DeleteMemories does.
func (s *Service) eraseSourceMemories(ctx context.Context, c Caller, ids []string, reason string, res EraseResult) error {
	if len(ids) == 0 || res.DryRun {
		return nil
	}
	if s.contradictions != nil {
		if _, err := s.contradictions.ForgetContradictions(ctx, c.UserID, ids); err != nil {
			return fmt.Errorf("knowledge: erase: graph erased; the source's memories not: %w", err)
		}
	}
	if _, _, err := s.memories.Erase(ctx, c.UserID, ids, vector.Removal{At: res.At, Actor: c.AgentID, Reason: reason}); err != nil {
		return fmt.Errorf("knowledge: erase: graph erased; the source's memories not: %w", memoryError(err))
	}
	if err := s.memories.Compact(ctx); err != nil {
		s.log.Warn("memory store not compacted after an erasure", "err", err)
	}
	return nil
}

// afterErase removes what the graph's transaction could not: entity
// vectors, contradictions holding erased values; records the tombstones;
// and compacts the graph's files. A failure leaves the graph erased and
// says what is left to do (erasing again finds nothing to erase).
func (s *Service) afterErase(ctx context.Context, c Caller, req EraseRequest, e graph.Erasure, files []string, res *EraseResult) error {
	erasedFiles := 0
	for _, id := range files {
		if s.eraseFile == nil {
			break
		}
		had, err := s.eraseFile(ctx, c.UserID, id)
		if err != nil {
			return fmt.Errorf("knowledge: erase: graph erased; the file's bytes not: %w", err)
		}
		if had {
			erasedFiles++
		}
	}
	res.Counts["files"] = erasedFiles
	if s.entityVecs != nil && len(e.EntityIDs) > 0 {
		if err := s.entityVecs.Delete(ctx, c.UserID, e.EntityIDs); err != nil {
			return fmt.Errorf("knowledge: erase: graph erased; entity embeddings left to the embedding worker: %w", err)
		}
	}
	s.textCache.purge()
	s.vecCache.purge()
	n, err := s.forget.EraseContradictions(ctx, c.UserID, e.EntityIDs, e.ObservationIDs)
	if err != nil {
		return fmt.Errorf("knowledge: erase: graph erased; contradictions not: %w", err)
	}
	res.Counts["contradictions"] = n
	ts := make([]GraphTombstone, len(res.IDs))
	for i, id := range res.IDs {
		ts[i] = GraphTombstone{UserID: c.UserID, Kind: req.Kind, ID: id, ErasedAt: res.At, Actor: c.AgentID, Reason: req.Reason, Counts: res.Counts}
	}
	// What went with them has a tombstone of its own too (no counts: the
	// erasure's are on the ids asked for), so that an import of an export
	// made before the erasure does not bring it back: the duplicates
	// merged into an erased entity, the entities a source's erasure left
	// with no observation, the sources left with none, a stored file's
	// interpretation batches.
	derived := func(kind EraseKind, id string) {
		if kind == req.Kind && slices.Contains(res.IDs, id) {
			return
		}
		ts = append(ts, GraphTombstone{UserID: c.UserID, Kind: kind, ID: id, ErasedAt: res.At, Actor: c.AgentID, Reason: req.Reason})
	}
	for _, id := range res.Entities {
		derived(EraseEntity, id)
	}
	for _, id := range e.SourceIDs {
		derived(EraseSource, id)
	}
	if err := s.forget.AddGraphTombstones(ctx, ts); err != nil {
		return fmt.Errorf("knowledge: erase: graph erased; tombstones not recorded: %w", err)
	}
	if err := s.graph.Compact(ctx); err != nil {
		s.log.Warn("graph store not compacted after an erasure", "err", err)
	}
	return nil
}

// erasePlan gathers, over the ids of one Erase, what goes.
type erasePlan struct {
	erasure graph.Erasure
	// whole are the entities erased whole (EntityIDs, as a set).
	whole map[string]bool
	// survivors lose observations and keep others.
	survivors []string
	// files are the erased sources that are stored files.
	files []string
}

func (p *erasePlan) entity(id string) {
	if !p.whole[id] {
		p.whole[id] = true
		p.erasure.EntityIDs = append(p.erasure.EntityIDs, id)
	}
}

func (p *erasePlan) observations(obs []graph.Observation) {
	for _, o := range obs {
		if !slices.Contains(p.erasure.ObservationIDs, o.ID) {
			p.erasure.ObservationIDs = append(p.erasure.ObservationIDs, o.ID)
		}
	}
}

// planEntity adds an entity to p. An unmerged entity goes with all its
// observations and the duplicates merged into it (whose observations are
// among them); a merged one with the observations it brought to the entity
// it was merged into, which is computed again without them.
func (s *Service) planEntity(ctx context.Context, tx *graph.Tx, c Caller, id string, p *erasePlan) error {
	e, err := s.readableEntity(ctx, tx, c, id, true)
	if err != nil {
		return err
	}
	if err := c.need(Delete, EntityResource(e.Type)); err != nil {
		return err
	}
	p.entity(e.ID)
	if e.Merged() {
		to, err := tx.ResolveEntity(ctx, c.UserID, e.ID)
		if err != nil {
			return err
		}
		obs, err := tx.AllObservations(ctx, c.UserID, to.ID)
		if err != nil {
			return err
		}
		p.observations(slices.DeleteFunc(obs, func(o graph.Observation) bool { return o.OriginalEntityID != e.ID }))
		p.survivors = append(p.survivors, to.ID)
		return nil
	}
	obs, err := tx.AllObservations(ctx, c.UserID, e.ID)
	if err != nil {
		return err
	}
	p.observations(obs)
	for _, o := range obs {
		if o.OriginalEntityID == "" || o.OriginalEntityID == e.ID || p.whole[o.OriginalEntityID] {
			continue
		}
		dup, err := tx.Entity(ctx, c.UserID, o.OriginalEntityID)
		if err == nil && dup.Merged() {
			p.entity(dup.ID)
		} else if err != nil && !errors.Is(err, graph.ErrNotFound) {
			return err
		}
	}
	return nil
}

// planSource adds a source to p: its observations go, and each entity they
// are about is computed again without them, or erased whole when they were
// all it had.
func (s *Service) planSource(ctx context.Context, tx *graph.Tx, c Caller, id string, p *erasePlan) error {
	if err := checkID("ids", id); err != nil {
		return err
	}
	src, err := tx.Source(ctx, c.UserID, id)
	if errors.Is(err, graph.ErrNotFound) {
		return &NotFoundError{Kind: ErrSourceNotFound, ID: id}
	} else if err != nil {
		return err
	}
	if slices.Contains(p.erasure.SourceIDs, id) {
		return nil
	}
	obs, err := tx.ObservationsBySource(ctx, c.UserID, id)
	if err != nil {
		return err
	}
	for _, o := range obs {
		if !c.readable(o.EntityType) {
			return &NotFoundError{Kind: ErrSourceNotFound, ID: id}
		}
	}
	// What it said about relationships is its content too: a source of
	// an edge the caller may not see is one it may not read, and erasing
	// it needs delete on both ends, as retracting the edge's observations
	// does.
	robs, err := tx.RelationshipObservationsBySource(ctx, c.UserID, id)
	if err != nil {
		return err
	}
	seen, err := seeRelationships(ctx, tx, c, relationshipIDs(robs))
	if err != nil {
		return err
	}
	var types []string
	for _, o := range obs {
		types = append(types, o.EntityType)
	}
	for _, r := range seen {
		if !r.visible {
			return &NotFoundError{Kind: ErrSourceNotFound, ID: id}
		}
		types = append(types, r.types...)
	}
	for _, t := range types {
		if err := c.need(Delete, EntityResource(t)); err != nil {
			return err
		}
	}
	p.observations(obs)
	p.erasure.SourceIDs = append(p.erasure.SourceIDs, id)
	if src.Kind == graph.SourceFile {
		// What interpreting the file produced is the file's too: the
		// batches whose provenance names it.
		p.files = append(p.files, id)
		batches, err := batchesOf(ctx, tx, c.UserID, id)
		if err != nil {
			return err
		}
		for _, b := range batches {
			if err := s.planSource(ctx, tx, c, b, p); err != nil {
				return err
			}
		}
	}
	var entities []string
	for _, o := range obs {
		if !slices.Contains(entities, o.EntityID) {
			entities = append(entities, o.EntityID)
		}
	}
	for _, eid := range entities {
		all, err := tx.AllObservations(ctx, c.UserID, eid)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(all, func(o graph.Observation) bool { return !slices.Contains(p.erasure.ObservationIDs, o.ID) }) {
			p.survivors = append(p.survivors, eid)
			continue
		}
		if err := s.planEntity(ctx, tx, c, eid, p); err != nil {
			return err
		}
	}
	return nil
}

// batchesOf returns the ids of the sources that interpreting a stored file
// produced: those whose provenance names it. It reads every source of the
// user (graph.Exporter), which an erasure can afford.
func batchesOf(ctx context.Context, tx *graph.Tx, userID, fileID string) ([]string, error) {
	ex, ok := tx.DriverTx.(graph.Exporter)
	if !ok {
		return nil, fmt.Errorf("knowledge: erase file %s: the graph cannot list sources", fileID)
	}
	var out []string
	for after := ""; ; {
		srcs, err := ex.SourcesAfter(ctx, userID, after, 500)
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			if src.ID != fileID && fileOfSource(src) == fileID {
				out = append(out, src.ID)
			}
		}
		if len(srcs) < 500 {
			return out, nil
		}
		after = srcs[len(srcs)-1].ID
	}
}

// orphanSources adds to p the sources every observation of which p
// erases: a source's row keeps what its call gave (provenance, a
// filename), which is the erased entities' content as much as their
// observations are. (Such a source's raw fragments and relationship
// observations are of those entities too.)
func orphanSources(ctx context.Context, tx *graph.Tx, userID string, p *erasePlan) error {
	if len(p.erasure.ObservationIDs) == 0 {
		return nil
	}
	obs, err := tx.ObservationsByID(ctx, userID, p.erasure.ObservationIDs)
	if err != nil {
		return err
	}
	erased := make(map[string]bool, len(obs))
	var sources []string
	for _, o := range obs {
		erased[o.ID] = true
		if !slices.Contains(sources, o.SourceID) && !slices.Contains(p.erasure.SourceIDs, o.SourceID) {
			sources = append(sources, o.SourceID)
		}
	}
	for _, src := range sources {
		all, err := tx.ObservationsBySource(ctx, userID, src)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(all, func(o graph.Observation) bool { return !erased[o.ID] }) {
			p.erasure.SourceIDs = append(p.erasure.SourceIDs, src)
		}
	}
	return nil
}

// eraseIDs checks req's kind and ids and returns the ids without repeats.
func eraseIDs(req EraseRequest) ([]string, error) {
	if req.Kind != EraseEntity && req.Kind != EraseSource {
		return nil, invalid("kind", "entity or source", fmt.Sprintf("%q", req.Kind), "kind must be entity or source")
	}
	var ids []string
	for i, id := range req.IDs {
		if err := checkID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return nil, invalid("ids", "1 to 100 ids", "none", "at least one id is required")
	case len(ids) > MaxEraseBatch:
		return nil, invalid("ids", fmt.Sprintf("1 to %d ids", MaxEraseBatch), fmt.Sprintf("%d ids", len(ids)), "too many ids")
	}
	return ids, nil
}

func orEmptyIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
