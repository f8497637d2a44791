package vector

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Forgetting (issue 37). A memory stops counting in one of two ways:
//
//   - retracted: it leaves every read (searches, listings, counts) but is
//     kept, with who retracted it, when and why, as a Version; an update
//     keeps the content it replaced the same way, as a superseded Version;
//   - erased: its content is removed from every table and index, with its
//     versions; what remains is a Tombstone (ids, time, actor, reason).

// VersionState says why a Version no longer counts.
type VersionState string

// The states of a Version.
const (
	// VersionRetracted is a memory retracted as a whole.
	VersionRetracted VersionState = "retracted"
	// VersionSuperseded is the content an update replaced.
	VersionSuperseded VersionState = "superseded"
)

// Removal says who made memories stop counting, when and why.
type Removal struct {
	// At is UTC, truncated to the microsecond; zero means now.
	At time.Time
	// Actor is the agent that acted.
	Actor  string
	Reason string
}

// Version is a memory's content that no longer counts: a retracted memory
// or what an update replaced. Memory.Embedding is set only when it is
// inserted (InsertVersions); reads leave it nil.
type Version struct {
	Memory
	State VersionState
	Removal
}

// Tombstone is what remains of an erased memory: no content.
type Tombstone struct {
	ID         string
	UserID     string
	Collection string
	Removal
}

// TombstonesOf returns a tombstone with r for each of ids that
// collections names (the collection each erased memory was in), in the
// order of ids: what a driver's Erase records.
func TombstonesOf(userID string, ids []string, collections map[string]string, r Removal) []Tombstone {
	var out []Tombstone
	for _, id := range ids {
		if c, ok := collections[id]; ok {
			out = append(out, Tombstone{ID: id, UserID: userID, Collection: c, Removal: r})
		}
	}
	return out
}

// Erased counts what an erasure removed, per kind.
type Erased struct {
	// Memories are live memories erased.
	Memories int
	// Retracted are retracted memories erased.
	Retracted int
	// Versions are superseded versions (kept by updates) erased.
	Versions int
}

// AddVersion counts an erased version in its state.
func (n *Erased) AddVersion(s VersionState) {
	if s == VersionRetracted {
		n.Retracted++
	} else {
		n.Versions++
	}
}

// Limits of one forgetting call.
const (
	// MaxBatch is the most memory ids one Retract or Erase takes.
	MaxBatch = 100
	// MaxReasonLen bounds Removal.Reason, in bytes.
	MaxReasonLen = 1 << 10
)

// ForgetDriver is what a memory backend implements to forget. It is part
// of Driver; the contracts are here because they belong together.
//
// Every method is scoped to the user id it is given. A removed row leaves
// every read of Driver (Get, Embeddings, Nearest, MatchText, List,
// Collections) at once: a driver that caches rows must notice removals,
// in every process.
type ForgetDriver interface {
	// Update replaces the content of the user's live memory m.ID with m's
	// title, text, tags, confidence, metadata, entity ids, source id, types
	// and embedding, keeping its collection and creation time, and keeps
	// the replaced content as a VersionSuperseded version with r, in one
	// transaction. A memory that is not live is an error wrapping
	// ErrNotFound. It returns the memory as stored, Embedding nil.
	Update(ctx context.Context, m Memory, r Removal) (Memory, error)
	// Retract moves the user's live memories with these ids out of every
	// read into VersionRetracted versions with r, all or none, and
	// returns the ids it retracted, in the order of ids (ids that are not
	// live are left out).
	Retract(ctx context.Context, userID string, ids []string, r Removal) ([]string, error)
	// Erase deletes the user's live memories with these ids and every
	// version of them, with their text, title, tags, metadata, vectors and
	// full-text index entries, and records a tombstone with r for each id
	// that had a live memory or a version, in one transaction. It returns
	// the tombstones, in the order of ids, and the counts per kind. The
	// deleted content must not survive in the backend's files once it
	// compacts (see Compactor).
	Erase(ctx context.Context, userID string, ids []string, r Removal) ([]Tombstone, Erased, error)
	// Versions returns the user's versions of the memories with these ids,
	// or of every memory when ids is nil, ordered by memory id, then by
	// the time they stopped counting; Embedding is nil.
	Versions(ctx context.Context, userID string, ids []string) ([]Version, error)
	// Tombstones returns the user's tombstones with these ids, or all of
	// them when ids is nil, by id.
	Tombstones(ctx context.Context, userID string, ids []string) ([]Tombstone, error)
	// InsertTombstones records tombstones (an import), keeping any that
	// exists already; the memories they name, live or versions, are not
	// touched.
	InsertTombstones(ctx context.Context, ts []Tombstone) error
	// InsertVersions records versions (an import); each has an Embedding.
	InsertVersions(ctx context.Context, vs []Version) error
	// DropSpaces deletes the user's collections (their recorded spaces)
	// that hold no memory, live or a version, and returns how many it
	// deleted: erasing a user (cairn admin erase --user) leaves no
	// collection name behind.
	DropSpaces(ctx context.Context, userID string) (int, error)
}

// Compactor is an optional capability of a driver whose erased content
// may linger in its files until a compaction (a write-ahead log, free
// pages): Compact makes the files hold none of it.
type Compactor interface {
	Compact(ctx context.Context) error
}

func (s *Store) removal(r Removal) (Removal, error) {
	if r.At.IsZero() {
		r.At = s.now()
	}
	r.At = r.At.UTC().Truncate(time.Microsecond)
	if r.Actor == "" {
		return r, invalid("actor", "is required")
	}
	if len(r.Reason) > MaxReasonLen {
		return r, invalid("reason", "is %d bytes, at most %d allowed", len(r.Reason), MaxReasonLen)
	}
	return r, nil
}

func validBatch(userID string, ids []string) ([]string, error) {
	if userID == "" {
		return nil, invalid("user_id", "is required")
	}
	ids = uniq(ids)
	if len(ids) == 0 {
		return nil, invalid("memory_ids", "at least one id is required")
	}
	if len(ids) > MaxBatch {
		return nil, invalid("memory_ids", "has %d ids, at most %d allowed", len(ids), MaxBatch)
	}
	if slices.Contains(ids, "") {
		return nil, invalid("memory_ids", "an id is empty")
	}
	return ids, nil
}

// Update replaces a live memory's content, re-embedded in space, and keeps
// the content it replaced as a superseded Version with r. m names the
// memory by ID and UserID; its Collection and CreatedAt are ignored (a
// memory keeps both), and a zero OccurredAt keeps the memory's. A memory that is not live is an error wrapping
// ErrNotFound; an embedding of another space than the collection's is a
// *SpaceError.
func (s *Store) Update(ctx context.Context, space Space, m Memory, r Removal) (Memory, error) {
	r, err := s.removal(r)
	if err != nil {
		return Memory{}, err
	}
	if m.ID == "" {
		return Memory{}, invalid("id", "is required")
	}
	if err := validSpace(space); err != nil {
		return Memory{}, err
	}
	cur, err := s.d.Get(ctx, m.UserID, []string{m.ID})
	if err != nil {
		return Memory{}, err
	}
	if len(cur) == 0 {
		return Memory{}, notFound(m.ID)
	}
	m.Collection, m.CreatedAt = cur[0].Collection, cur[0].CreatedAt
	if m.OccurredAt.IsZero() {
		m.OccurredAt = cur[0].OccurredAt
	}
	m.OccurredAt = m.OccurredAt.UTC().Truncate(time.Microsecond)
	if err := validMemory(m, space); err != nil {
		return Memory{}, err
	}
	spaces, err := s.d.Spaces(ctx, m.UserID, []string{m.Collection})
	if err != nil {
		return Memory{}, err
	}
	if got := spaces[m.Collection]; got != space {
		return Memory{}, &SpaceError{Collection: m.Collection, Recorded: got, Given: space}
	}
	if len(m.Types) > 0 {
		m.Types = slices.Compact(slices.Sorted(slices.Values(m.Types)))
	}
	return s.d.Update(ctx, m, r)
}

// Retract makes the user's live memories with these ids stop counting,
// keeping them as retracted Versions with r, and returns the ids it
// retracted (ids that are not live are left out).
func (s *Store) Retract(ctx context.Context, userID string, ids []string, r Removal) ([]string, error) {
	ids, err := validBatch(userID, ids)
	if err != nil {
		return nil, err
	}
	if r, err = s.removal(r); err != nil {
		return nil, err
	}
	return s.d.Retract(ctx, userID, ids, r)
}

// Erase removes the user's memories with these ids, live or retracted,
// with every version of them, leaving tombstones; see ForgetDriver.Erase.
func (s *Store) Erase(ctx context.Context, userID string, ids []string, r Removal) ([]Tombstone, Erased, error) {
	ids, err := validBatch(userID, ids)
	if err != nil {
		return nil, Erased{}, err
	}
	if r, err = s.removal(r); err != nil {
		return nil, Erased{}, err
	}
	return s.d.Erase(ctx, userID, ids, r)
}

// Versions returns the user's versions of the memories with these ids, or
// of all its memories when ids is nil.
func (s *Store) Versions(ctx context.Context, userID string, ids []string) ([]Version, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	return s.d.Versions(ctx, userID, ids)
}

// Tombstones returns the user's tombstones with these ids, or all of them
// when ids is nil.
func (s *Store) Tombstones(ctx context.Context, userID string, ids []string) ([]Tombstone, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	return s.d.Tombstones(ctx, userID, ids)
}

// InsertTombstones records tombstones, as an import brings them.
func (s *Store) InsertTombstones(ctx context.Context, ts []Tombstone) error {
	for _, t := range ts {
		if t.ID == "" || t.UserID == "" {
			return invalid("tombstones", "a tombstone needs an id and a user")
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return s.d.InsertTombstones(ctx, ts)
}

// InsertVersions records versions with their embeddings in space, as an
// import brings them.
func (s *Store) InsertVersions(ctx context.Context, space Space, vs []Version) error {
	vs = slices.Clone(vs)
	for i, v := range vs {
		if err := validMemory(v.Memory, space); err != nil {
			return err
		}
		if v.OccurredAt.IsZero() { // an export from before occurred_at
			vs[i].OccurredAt = v.CreatedAt
		}
		if v.State != VersionRetracted && v.State != VersionSuperseded {
			return invalid("state", "must be retracted or superseded")
		}
	}
	if len(vs) == 0 {
		return nil
	}
	return s.d.InsertVersions(ctx, vs)
}

// DropSpaces deletes the user's collections that hold no memory, live or
// a version (see ForgetDriver.DropSpaces).
func (s *Store) DropSpaces(ctx context.Context, userID string) (int, error) {
	if userID == "" {
		return 0, errors.New("vector: drop spaces: a user id is required")
	}
	return s.d.DropSpaces(ctx, userID)
}

// Compact makes the driver's files hold nothing erased, when the driver
// keeps files that may (see Compactor); else it does nothing.
func (s *Store) Compact(ctx context.Context) error {
	if c, ok := s.d.(Compactor); ok {
		return c.Compact(ctx)
	}
	return nil
}
