package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// Contradiction statuses.
const (
	ContradictionOpen     = "open"
	ContradictionResolved = "resolved"
)

// Resolution is how a contradiction was settled.
type Resolution string

// The resolutions of review_memories.
const (
	// Confirm: the new value wins; it is recorded as a correction.
	Confirm Resolution = "confirm"
	// Reject: the contradicting observation stops counting in the reducer.
	// It stays recorded, so provenance and list_observations still show it.
	Reject Resolution = "reject"
	// KeepBoth: the contradiction is closed and nothing else changes.
	KeepBoth Resolution = "keep_both"
)

// Retracted is how a contradiction is closed when one of its sides stops
// counting: its current or new observation was retracted, or the memory
// that claims its new value. It is not a resolution review_memories
// takes: what it settled was the retraction's, which says who and why.
// Undoing the retraction opens the contradiction again.
const Retracted Resolution = "retracted"

// MaxOpenContradictions is the most contradictions review_memories lists at
// once, as the Epitome specification says.
const MaxOpenContradictions = 5

// ErrContradictionNotFound means the contradiction does not exist for this
// user, or is about an entity the caller may not read.
var ErrContradictionNotFound = errors.New("contradiction not found")

// ErrContradictionResolved means the contradiction was already resolved.
var ErrContradictionResolved = errors.New("contradiction already resolved")

// Contradiction is a new value for an entity field that disagrees with the
// field's current value, which came from a different source.
type Contradiction struct {
	ID         string
	UserID     string
	EntityID   string
	EntityType string
	Field      string
	// CurrentValue is the snapshot value when the contradiction was found,
	// with the observation it came from and that observation's source.
	CurrentValue         any
	CurrentObservationID string
	CurrentSourceID      string
	// NewValue is the contradicting value. NewObservationID is the
	// observation that holds it; a contradiction reported by the memory
	// store names the memory there instead (its id has the memory prefix),
	// and NewSourceID the memory's source, if any.
	NewValue         any
	NewObservationID string
	NewSourceID      string
	DetectedAt       time.Time
	Status           string // ContradictionOpen or ContradictionResolved
	Resolution       Resolution
	ResolvedAt       time.Time
	ResolvedBy       string // the agent that resolved it
	// CorrectionID is the correction observation a Confirm made.
	CorrectionID string
	// MemoryHidden is set, on what the service returns, when the new value
	// is the claim of a memory in a collection the caller may not read:
	// NewObservationID is then empty, so the memory's id does not leak.
	// It is never stored.
	MemoryHidden bool
}

// memoryIDPrefix starts every memory id (vector.NewID).
const memoryIDPrefix = "mem_"

// FromMemory reports whether the new value is a memory's claim rather than
// an observation's.
func (c Contradiction) FromMemory() bool {
	return c.MemoryHidden || strings.HasPrefix(c.NewObservationID, memoryIDPrefix)
}

// hideMemories blanks, in cs, the ids of claiming memories that the caller
// may not read (a memory that no longer exists counts as unreadable, and so
// does every memory when the memory store cannot be read: this errs on the
// side of consent, and never fails a resolution already made). The claimed
// value stays: it is a statement about an entity the caller may read.
func (s *Service) hideMemories(ctx context.Context, c Caller, cs []Contradiction) {
	var ids []string
	for _, ct := range cs {
		if ct.FromMemory() && !ct.MemoryHidden {
			ids = append(ids, ct.NewObservationID)
		}
	}
	if len(ids) == 0 {
		return
	}
	readable := map[string]bool{}
	if s.memories != nil {
		ms, err := s.memories.Get(ctx, c.UserID, ids)
		if err != nil {
			s.log.Warn("claiming memories not read; their ids are hidden", "count", len(ids), "err", err)
		}
		for _, m := range ms {
			readable[m.ID] = c.May(Read, MemoryResource(m.Collection)) && c.MayReadAll(m.Types)
		}
	}
	for i := range cs {
		if cs[i].FromMemory() && !readable[cs[i].NewObservationID] {
			cs[i].NewObservationID, cs[i].MemoryHidden = "", true
		}
	}
}

// ContradictionStore keeps contradictions and the observations that Reject
// took out of the reducer. controlplane.Store implements it on SQLite and
// PostgreSQL.
type ContradictionStore interface {
	// AddContradictions records contradictions; one whose id is already
	// recorded is left as it is.
	AddContradictions(ctx context.Context, cs []Contradiction) error
	// OpenContradictions returns up to limit open contradictions of the
	// user, oldest first, about entities of the given types (nil means any
	// type, an empty non-nil slice none).
	OpenContradictions(ctx context.Context, userID string, entityTypes []string, limit int) ([]Contradiction, error)
	// Contradiction returns one contradiction, or an error wrapping
	// ErrContradictionNotFound.
	Contradiction(ctx context.Context, userID, id string) (Contradiction, error)
	// ResolveContradiction marks an open contradiction resolved (Status,
	// Resolution, ResolvedAt, ResolvedBy and CorrectionID come from r) and,
	// for Reject, records its new observation as rejected, in one
	// transaction. An already resolved one gives an error wrapping
	// ErrContradictionResolved.
	ResolveContradiction(ctx context.Context, r Contradiction) error
	// RejectedObservations returns which of the given observation ids a
	// resolution rejected or a retraction (GraphForgetStore.Retract) took
	// out: the observations the reducer skips.
	RejectedObservations(ctx context.Context, userID string, observationIDs []string) (map[string]bool, error)
	// ForgetContradictions removes the user's contradictions, open or
	// resolved, whose new observation is one of observationIDs (the claims
	// of erased memories: their values are the memories' content), with
	// the rejections recorded of those observations, and returns how many
	// contradictions it removed.
	ForgetContradictions(ctx context.Context, userID string, observationIDs []string) (int, error)
	// CloseRetracted resolves as Retracted, at and by the agent, the
	// user's open contradictions whose current or new observation is one
	// of observationIDs (a memory's id names its claims), and returns them
	// as resolved.
	CloseRetracted(ctx context.Context, userID string, observationIDs []string, at time.Time, by string) ([]Contradiction, error)
	// RetractedContradictions returns the user's contradictions resolved
	// as Retracted whose current or new observation is one of
	// observationIDs.
	RetractedContradictions(ctx context.Context, userID string, observationIDs []string) ([]Contradiction, error)
	// ReopenRetracted opens again those of the contradictions ids that are
	// resolved as Retracted and neither side of which a retraction of an
	// observation (GraphForgetStore.Retract) still takes out, and returns
	// the ids it opened.
	ReopenRetracted(ctx context.Context, userID string, ids []string) ([]string, error)
}

// contradictionsIn compares the fields of a new observation with the
// current snapshot of the entity it is about, and returns a contradiction
// for every schema field whose current value is different and came from
// another source. Arrays merged by union (merge_array) never contradict.
// It is the detection hook of the store pipeline, run inside its
// transaction before the observation counts; it writes nothing. prev holds
// the observations that the current values came from, at least those
// that disagreeing names; one that is missing is an error wrapping
// graph.ErrNotFound.
func contradictionsIn(sc *schema.Schema, current graph.Entity, o graph.Observation, now time.Time, prev map[string]graph.Observation) ([]Contradiction, error) {
	var out []Contradiction
	for _, name := range sortedKeys(o.Fields) {
		cv, curObs, ok := disagrees(sc, current, o, name)
		if !ok {
			continue
		}
		p, ok := prev[curObs]
		if !ok {
			return nil, &graph.NotFoundError{What: "observation", ID: curObs}
		}
		if p.SourceID == o.SourceID {
			continue
		}
		out = append(out, Contradiction{
			ID: hashID("ctr_", o.UserID, o.ID, name), UserID: o.UserID, EntityID: current.ID, EntityType: current.Type, Field: name,
			CurrentValue: cv, CurrentObservationID: p.ID, CurrentSourceID: p.SourceID,
			NewValue: o.Fields[name], NewObservationID: o.ID, NewSourceID: o.SourceID, DetectedAt: now, Status: ContradictionOpen,
		})
	}
	return out, nil
}

// disagreeing returns the observations that the current values of the
// fields that o disagrees with came from: what contradictionsIn needs to
// read.
func disagreeing(sc *schema.Schema, current graph.Entity, o graph.Observation) []string {
	var out []string
	for _, name := range sortedKeys(o.Fields) {
		if _, curObs, ok := disagrees(sc, current, o, name); ok {
			out = append(out, curObs)
		}
	}
	return out
}

// disagrees reports whether o's value of a schema field differs from the
// current one, which has provenance (merge_array fields never disagree),
// and returns the current value and the observation it came from.
func disagrees(sc *schema.Schema, current graph.Entity, o graph.Observation, name string) (any, string, bool) {
	f, ok := sc.Fields[name]
	nv := o.Fields[name]
	if !ok || nv == nil || f.EffectivePolicy() == schema.MergeArray {
		return nil, "", false
	}
	cv, ok := current.Snapshot[name]
	if !ok || cv == nil || equivalent(cv, nv) {
		return nil, "", false
	}
	curObs, ok := current.Provenance[name]
	if !ok {
		return nil, "", false
	}
	return cv, curObs, true
}

// equivalent reports whether two field values say the same thing: strings
// equal up to case and surrounding space, numbers equal as numbers, and
// anything else equal as canonical JSON.
func equivalent(a, b any) bool {
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.EqualFold(strings.TrimSpace(sa), strings.TrimSpace(sb))
		}
	}
	if na, ok := number(a); ok {
		if nb, ok := number(b); ok {
			return na.Cmp(nb) == 0
		}
	}
	return sameJSON(a, b)
}

func number(v any) (*big.Float, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case float64:
		return big.NewFloat(v), true
	case int:
		return big.NewFloat(float64(v)), true
	default:
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 10, 128, big.ToNearestEven)
	return f, err == nil
}

// RecordContradictions records contradictions found outside the store
// pipeline, such as by the memory store when a memory disagrees with an
// entity field. Each must name its user, entity, field and new value; ids
// and detection times are filled in when missing. Without a contradiction
// store it does nothing.
func (s *Service) RecordContradictions(ctx context.Context, cs []Contradiction) error {
	if s.contradictions == nil || len(cs) == 0 {
		return nil
	}
	for i := range cs {
		c := &cs[i]
		if c.UserID == "" || c.EntityID == "" || c.Field == "" || c.NewObservationID == "" {
			return fmt.Errorf("knowledge: record contradiction: user, entity, field and new observation are required")
		}
		if c.ID == "" {
			c.ID = hashID("ctr_", c.UserID, c.NewObservationID, c.Field)
		}
		if c.DetectedAt.IsZero() {
			c.DetectedAt = s.clock()
		}
		c.Status = ContradictionOpen
	}
	if err := s.contradictions.AddContradictions(ctx, cs); err != nil {
		return fmt.Errorf("knowledge: record contradictions: %w", err)
	}
	return nil
}

// recordDetected records what the store pipeline found once its
// transaction committed. The stored data is already safe, so a failure is
// logged rather than failing the call.
func (s *Service) recordDetected(ctx context.Context, cs []Contradiction) {
	if err := s.RecordContradictions(ctx, cs); err != nil {
		s.log.Warn("contradictions not recorded", "count", len(cs), "err", err)
	}
}

// OpenContradictions returns up to MaxOpenContradictions open
// contradictions about entities the caller may read, oldest first.
func (s *Service) OpenContradictions(ctx context.Context, c Caller) ([]Contradiction, error) {
	if s.contradictions == nil {
		return nil, unavailable("contradiction store")
	}
	var types []string
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		types, err = s.readableTypes(ctx, tx, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: open contradictions: %w", err)
	}
	out, err := s.contradictions.OpenContradictions(ctx, c.UserID, types, MaxOpenContradictions)
	if err != nil {
		return nil, fmt.Errorf("knowledge: open contradictions: %w", err)
	}
	s.hideMemories(ctx, c, out)
	return out, nil
}

// ResolveContradiction settles an open contradiction about an entity the
// caller may change:
//
//   - Confirm records the new value as a correction (priority
//     CorrectionPriority, through Correct), so it wins from now on; the
//     correction's source provenance names the contradiction and the
//     observation or memory the value came from;
//   - Reject records the contradicting observation as rejected and
//     recomputes the entity, whose reducer then skips it (the observation
//     stays, so provenance still shows it). A memory's claim never counted
//     in the reducer: the rejection is recorded and nothing is recomputed;
//   - KeepBoth only closes the contradiction.
//
// If the entity was merged since, the entity it was merged into is changed.
func (s *Service) ResolveContradiction(ctx context.Context, c Caller, id string, r Resolution) (Contradiction, error) {
	if s.contradictions == nil {
		return Contradiction{}, unavailable("contradiction store")
	}
	if err := checkID("contradiction_id", id); err != nil {
		return Contradiction{}, err
	}
	switch r {
	case Confirm, Reject, KeepBoth:
	default:
		return Contradiction{}, invalid("resolution", "one of: confirm, reject, keep_both", "string", "unknown resolution %q", truncate(string(r), 32))
	}
	ct, err := s.contradictions.Contradiction(ctx, c.UserID, id)
	if errors.Is(err, ErrContradictionNotFound) || (err == nil && !c.readable(ct.EntityType)) {
		return Contradiction{}, &NotFoundError{Kind: ErrContradictionNotFound, ID: id}
	}
	if err != nil {
		return Contradiction{}, fmt.Errorf("knowledge: resolve contradiction: %w", err)
	}
	if !c.writable(ct.EntityType) {
		return Contradiction{}, &ForbiddenError{EntityType: ct.EntityType, Action: "write"}
	}
	if ct.Status != ContradictionOpen {
		return Contradiction{}, fmt.Errorf("knowledge: contradiction %s was resolved (%s): %w", id, ct.Resolution, ErrContradictionResolved)
	}
	entityID := ct.EntityID
	if err := s.graph.View(ctx, func(tx *graph.Tx) error {
		e, err := tx.ResolveEntity(ctx, c.UserID, ct.EntityID)
		entityID = e.ID
		return err
	}); err != nil {
		if graph.IsNotFound(err) {
			return Contradiction{}, &NotFoundError{Kind: ErrContradictionNotFound, ID: id}
		}
		return Contradiction{}, fmt.Errorf("knowledge: resolve contradiction: %w", err)
	}
	if r == Confirm {
		prov := map[string]any{"contradiction_id": ct.ID}
		if ct.FromMemory() {
			prov["memory_id"] = ct.NewObservationID
		} else {
			prov["observation_id"] = ct.NewObservationID
		}
		res, err := s.Correct(ctx, c, CorrectRequest{EntityID: entityID, EntityType: ct.EntityType, Field: ct.Field, Value: ct.NewValue, provenance: prov})
		if err != nil {
			return Contradiction{}, err
		}
		ct.CorrectionID = res.ObservationID
	}
	ct.Status, ct.Resolution, ct.ResolvedAt, ct.ResolvedBy = ContradictionResolved, r, s.clock(), c.AgentID
	if err := s.contradictions.ResolveContradiction(ctx, ct); err != nil {
		return Contradiction{}, fmt.Errorf("knowledge: resolve contradiction: %w", err)
	}
	if r == Reject && !ct.FromMemory() {
		err := s.graph.Update(ctx, func(tx *graph.Tx) error {
			_, err := s.recompute(ctx, tx, c.UserID, entityID)
			return err
		})
		if err != nil {
			return Contradiction{}, fmt.Errorf("knowledge: resolve contradiction: recompute %s: %w", entityID, err)
		}
	}
	out := []Contradiction{ct}
	s.hideMemories(ctx, c, out)
	return out[0], nil
}

// counted drops the observations that a Reject resolution took out of the
// reducer. Without a contradiction store every observation counts.
func (s *Service) counted(ctx context.Context, userID string, obs []graph.Observation) ([]graph.Observation, error) {
	if s.contradictions == nil || len(obs) == 0 {
		return obs, nil
	}
	ids := make([]string, len(obs))
	for i, o := range obs {
		ids[i] = o.ID
	}
	rejected, err := s.contradictions.RejectedObservations(ctx, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("knowledge: rejected observations: %w", err)
	}
	if len(rejected) == 0 {
		return obs, nil
	}
	out := make([]graph.Observation, 0, len(obs))
	for _, o := range obs {
		if !rejected[o.ID] {
			out = append(out, o)
		}
	}
	return out, nil
}

// FieldClaim is a value that something other than an observation, such as
// a memory, states for an entity field.
type FieldClaim struct {
	EntityID string
	Field    string
	Value    any
	// ClaimID names what makes the claim (a memory id); it becomes the
	// contradiction's NewObservationID.
	ClaimID string
	// SourceID is the claim's source, if any; a claim from the source of
	// the current value contradicts nothing.
	SourceID string
}

// CheckClaims compares claims with the current values of the fields they
// name and records a contradiction for each that disagrees with a value
// that came from another source; it returns those contradictions. It is how
// the memory store reports a memory that contradicts an entity. Claims about
// entities the caller may not read, missing entities and fields the entity
// does not have are skipped. Without a contradiction store it does nothing.
func (s *Service) CheckClaims(ctx context.Context, c Caller, claims []FieldClaim) ([]Contradiction, error) {
	if s.contradictions == nil || len(claims) == 0 {
		return nil, nil
	}
	now := s.clock()
	var found []Contradiction
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		found = nil
		for _, cl := range claims {
			if cl.ClaimID == "" || cl.Field == "" || cl.Value == nil {
				return invalid("claim", "entity_id, field, value and claim id", "incomplete claim", "every claim needs an entity, a field, a value and an id")
			}
			e, err := tx.ResolveEntity(ctx, c.UserID, cl.EntityID)
			if graph.IsNotFound(err) || (err == nil && !c.readable(e.Type)) {
				continue
			}
			if err != nil {
				return err
			}
			cv, ok := e.Snapshot[cl.Field]
			obsID, hasProv := e.Provenance[cl.Field]
			if !ok || cv == nil || !hasProv || equivalent(cv, cl.Value) {
				continue
			}
			prev, err := tx.Observation(ctx, c.UserID, obsID)
			if err != nil {
				return err
			}
			if cl.SourceID != "" && prev.SourceID == cl.SourceID {
				continue
			}
			found = append(found, Contradiction{
				ID: hashID("ctr_", c.UserID, cl.ClaimID, e.ID, cl.Field), UserID: c.UserID, EntityID: e.ID, EntityType: e.Type,
				Field: cl.Field, CurrentValue: cv, CurrentObservationID: prev.ID, CurrentSourceID: prev.SourceID,
				NewValue: cl.Value, NewObservationID: cl.ClaimID, NewSourceID: cl.SourceID, DetectedAt: now, Status: ContradictionOpen,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: check claims: %w", err)
	}
	if err := s.RecordContradictions(ctx, found); err != nil {
		return nil, err
	}
	return found, nil
}
