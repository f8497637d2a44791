package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// Forgetting memories (issue 37, docs/forgetting.md). A memory the caller
// may not read (its collection, or a type it carries) is answered exactly
// as one that does not exist: ErrMemoryNotFound. Only then is the action
// checked: write for an update, delete for a retraction or an erasure.

// ForgetMode is how DeleteMemories forgets.
type ForgetMode string

// The modes of DeleteMemories.
const (
	// ForgetRetract: the memory stops counting, and is kept with who
	// retracted it, when and why. Reversible.
	ForgetRetract ForgetMode = "retract"
	// ForgetErase: the memory's content, vector and index entries, and
	// every earlier version of it, are removed; a tombstone remains.
	ForgetErase ForgetMode = "erase"
)

// MaxForgetBatch is the most memory ids one DeleteMemories takes.
const MaxForgetBatch = vector.MaxBatch

// MemoryUpdate changes a memory's content; nil fields are kept.
type MemoryUpdate struct {
	ID       string
	Text     *string
	Title    *string
	Tags     *[]string
	Metadata *map[string]any
	// OccurredAt moves when the remembered thing happened or was said.
	OccurredAt *time.Time
	// Reason is kept with the replaced version.
	Reason string
}

// UpdatedMemory is a memory as an update left it.
type UpdatedMemory struct {
	vector.Memory
	// UpdatedAt is when the update replaced the earlier content.
	UpdatedAt time.Time
}

// UpdateMemory replaces a memory's text, title, tags, metadata or
// occurred_at and embeds it again; the memory keeps its id, collection and creation time,
// and the content it had is kept as a superseded version naming the
// caller's agent, the time and the reason. The caller needs read on the
// memory (else ErrMemoryNotFound) and write on its collection.
func (s *Service) UpdateMemory(ctx context.Context, c Caller, u MemoryUpdate) (UpdatedMemory, error) {
	if s.memories == nil {
		return UpdatedMemory{}, ErrMemoriesUnavailable
	}
	if u.Text == nil && u.Title == nil && u.Tags == nil && u.Metadata == nil && u.OccurredAt == nil {
		return UpdatedMemory{}, invalid("", "text, title, tags, metadata or occurred_at", "none", "nothing to update")
	}
	if u.OccurredAt != nil && u.OccurredAt.IsZero() {
		return UpdatedMemory{}, invalid("occurred_at", "an RFC 3339 time", "none", "occurred_at must be a time")
	}
	if u.Text != nil && strings.TrimSpace(*u.Text) == "" {
		return UpdatedMemory{}, invalid("text", "non-empty string", "empty", "text must not be empty")
	}
	if err := checkReason(u.Reason); err != nil {
		return UpdatedMemory{}, err
	}
	if err := checkID("memory_id", u.ID); err != nil {
		return UpdatedMemory{}, err
	}
	found, err := s.readableMemories(ctx, c, []string{u.ID}, false)
	if err != nil {
		return UpdatedMemory{}, err
	}
	m := found[0]
	if err := c.need(Write, MemoryResource(m.Collection)); err != nil {
		return UpdatedMemory{}, err
	}
	if u.Text != nil {
		m.Text = *u.Text
	}
	if u.Title != nil {
		m.Title = *u.Title
	}
	if u.Tags != nil {
		m.Tags = *u.Tags
	}
	if u.Metadata != nil {
		if err := s.checkFieldSizes("metadata", *u.Metadata); err != nil {
			return UpdatedMemory{}, err
		}
		m.Metadata = *u.Metadata
	}
	if u.OccurredAt != nil {
		m.OccurredAt = u.OccurredAt.UTC()
	}
	vec, space, err := s.embed(ctx, memoryText(m.Title, m.Text))
	if err != nil {
		return UpdatedMemory{}, err
	}
	m.Embedding = vec
	at := s.clock()
	out, err := s.memories.Update(ctx, space, m, vector.Removal{At: at, Actor: c.AgentID, Reason: u.Reason})
	if errors.Is(err, vector.ErrNotFound) { // retracted or erased meanwhile
		return UpdatedMemory{}, &NotFoundError{Kind: ErrMemoryNotFound, ID: u.ID}
	}
	if err != nil {
		return UpdatedMemory{}, memoryError(err)
	}
	hits := []vector.Hit{{Memory: out}}
	if err := s.redactLinks(ctx, c, hits); err != nil {
		return UpdatedMemory{}, err
	}
	return UpdatedMemory{Memory: hits[0].Memory, UpdatedAt: at}, nil
}

// MemoryDeletion forgets memories.
type MemoryDeletion struct {
	IDs    []string
	Mode   ForgetMode
	Reason string
}

// DeletedMemories says what DeleteMemories affected.
type DeletedMemories struct {
	Mode ForgetMode
	// IDs are the memories forgotten, in the order asked, without repeats.
	IDs []string
	// Counts are per kind: "memories" (live memories retracted or erased),
	// "contradictions" (those the memories' claims raised: for a
	// retraction the open ones it closed, about entity types the caller
	// may read; for an erasure all of them, which held the claimed values)
	// and for an erasure "retracted_memories" (memories retracted before,
	// erased now) and "versions" (earlier content kept by updates).
	Counts map[string]int
	At     time.Time
	// Tombstones are what remains of erased memories.
	Tombstones []vector.Tombstone
}

// DeleteMemories retracts or erases memories, all or none. Every id must
// be a memory the caller may read (else ErrMemoryNotFound naming the first
// that is not, and nothing changes), and the caller needs delete on each
// one's collection. A retraction takes live memories; an erasure also
// takes retracted ones.
func (s *Service) DeleteMemories(ctx context.Context, c Caller, d MemoryDeletion) (DeletedMemories, error) {
	if s.memories == nil {
		return DeletedMemories{}, ErrMemoriesUnavailable
	}
	if d.Mode != ForgetRetract && d.Mode != ForgetErase {
		return DeletedMemories{}, invalid("mode", "retract or erase", fmt.Sprintf("%q", d.Mode), "mode must be retract or erase")
	}
	var ids []string
	for _, id := range d.IDs {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return DeletedMemories{}, invalid("memory_ids", "1 to 100 ids", "none", "at least one memory id is required")
	case len(ids) > MaxForgetBatch:
		return DeletedMemories{}, invalid("memory_ids", fmt.Sprintf("1 to %d ids", MaxForgetBatch), fmt.Sprintf("%d ids", len(ids)), "too many ids")
	}
	if err := checkReason(d.Reason); err != nil {
		return DeletedMemories{}, err
	}
	found, err := s.readableMemories(ctx, c, ids, d.Mode == ForgetErase)
	if err != nil {
		return DeletedMemories{}, err
	}
	for _, m := range found {
		if err := c.need(Delete, MemoryResource(m.Collection)); err != nil {
			return DeletedMemories{}, err
		}
	}
	out := DeletedMemories{Mode: d.Mode, IDs: ids, At: s.clock()}
	r := vector.Removal{At: out.At, Actor: c.AgentID, Reason: d.Reason}
	if d.Mode == ForgetRetract {
		return s.retractMemories(ctx, c, ids, r, out)
	}
	// A memory's claims went into contradictions with their values, which
	// are the memory's content: they go first, so that a failure leaves
	// the memory to erase again rather than its claims behind it.
	forgotten := 0
	if s.contradictions != nil {
		if forgotten, err = s.contradictions.ForgetContradictions(ctx, c.UserID, ids); err != nil {
			return DeletedMemories{}, err
		}
	}
	ts, n, err := s.memories.Erase(ctx, c.UserID, ids, r)
	if err != nil {
		return DeletedMemories{}, memoryError(err)
	}
	out.IDs = make([]string, len(ts))
	for i, t := range ts {
		out.IDs[i] = t.ID
	}
	out.Tombstones = ts
	out.Counts = map[string]int{"memories": n.Memories, "retracted_memories": n.Retracted, "versions": n.Versions, "contradictions": forgotten}
	// The content is gone from the tables; the backend's files follow
	// (a failure leaves it for the next compaction, not undone).
	if err := s.memories.Compact(ctx); err != nil {
		s.log.Warn("memory store not compacted after an erasure", "err", err)
	}
	return out, nil
}

// retractMemories retracts live memories and closes the open
// contradictions their claims raised (Retracted): a claim of a memory that
// no longer counts is no question to review. They are closed first, so
// that a failure leaves the memories live, to retract again, rather than
// retracted with their claims still open; a failure to retract opens them
// again.
func (s *Service) retractMemories(ctx context.Context, c Caller, ids []string, r vector.Removal, out DeletedMemories) (DeletedMemories, error) {
	var closed []Contradiction
	if s.contradictions != nil {
		var err error
		if closed, err = s.contradictions.CloseRetracted(ctx, c.UserID, ids, r.At, c.AgentID); err != nil {
			return DeletedMemories{}, err
		}
	}
	done, err := s.memories.Retract(ctx, c.UserID, ids, r)
	if err != nil {
		if len(closed) > 0 {
			reopen := make([]string, len(closed))
			for i, ct := range closed {
				reopen[i] = ct.ID
			}
			if _, rerr := s.contradictions.ReopenRetracted(ctx, c.UserID, reopen); rerr != nil {
				s.log.Warn("contradictions of memories not retracted left closed", "count", len(reopen), "err", rerr)
			}
		}
		return DeletedMemories{}, memoryError(err)
	}
	n := 0
	for _, ct := range closed {
		if c.readable(ct.EntityType) {
			n++
		}
	}
	out.IDs, out.Counts = done, map[string]int{"memories": len(done), "contradictions": n}
	return out, nil
}

// readableMemories returns the memories with these ids, live or (with
// retracted) retracted, in the order of ids, as their collection and
// types; an id that is neither, or that the caller may not read, is
// ErrMemoryNotFound.
func (s *Service) readableMemories(ctx context.Context, c Caller, ids []string, retracted bool) ([]vector.Memory, error) {
	for i, id := range ids {
		if err := checkID(fmt.Sprintf("memory_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	live, err := s.memories.Get(ctx, c.UserID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]vector.Memory, len(ids))
	for _, m := range live {
		byID[m.ID] = m
	}
	if retracted && len(byID) < len(ids) {
		vs, err := s.memories.Versions(ctx, c.UserID, ids)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if _, ok := byID[v.ID]; !ok && v.State == vector.VersionRetracted {
				byID[v.ID] = v.Memory
			}
		}
	}
	types, err := s.memoryReadableTypes(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]vector.Memory, len(ids))
	for i, id := range ids {
		m, ok := byID[id]
		if !ok || !c.May(Read, MemoryResource(m.Collection)) || !(vector.Filter{ReadableTypes: types}).AdmitsTypes(m.Types) {
			return nil, &NotFoundError{Kind: ErrMemoryNotFound, ID: id}
		}
		out[i] = m
	}
	return out, nil
}

func checkReason(reason string) error {
	if len(reason) > vector.MaxReasonLen {
		return invalid("reason", fmt.Sprintf("at most %d bytes", vector.MaxReasonLen), fmt.Sprintf("%d bytes", len(reason)), "reason is too long")
	}
	return nil
}
