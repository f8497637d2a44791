package vector

import (
	"context"
	"fmt"
	"time"
)

// Entity embeddings are the other kind of vector Cairn keeps: one per graph
// entity, made from a short text about it (package knowledge says which),
// so that ranking entities by similarity to a topic reads vectors instead of
// embedding every candidate. They are not memories: they live in a table of
// their own, keyed by entity id, are replaced whenever the entity changes,
// and never show up in memory listings or searches. Each records its own
// space, so that vectors of an old embedder are recognised (and ignored, or
// rebuilt by `cairn reembed`) rather than compared with new ones.

// EntityEmbedding is the stored embedding of one entity.
type EntityEmbedding struct {
	UserID   string
	EntityID string
	// Space is the embedder and dimension the vector belongs to.
	Space Space
	// TextHash identifies the text the vector was made from (a hash the
	// caller computes), so that a caller can tell a current vector from
	// one of an older version of the entity.
	TextHash string
	// Embedding is the vector. The store keeps it packed to 8 bits
	// (PackInt8), so a vector read back is RoundInt8 of the one written.
	Embedding []float32
	// UpdatedAt is when the vector was written (UTC, microseconds); Put
	// sets it when zero.
	UpdatedAt time.Time
}

// EntityKey names one user's entity.
type EntityKey struct {
	UserID   string
	EntityID string
}

// EntityDriver is what a backend implements to keep entity embeddings. Every
// method but EntityEmbeddingsOutside is scoped to one user.
type EntityDriver interface {
	// PutEntityEmbeddings inserts the embeddings or replaces the stored
	// ones of the same user and entity, all or none. It stores each vector
	// as PackInt8 encodes it, and EntityEmbeddings returns it decoded by
	// UnpackInt8, so that every backend reads back the same vector.
	PutEntityEmbeddings(ctx context.Context, es []EntityEmbedding) error
	// AddEntityEmbeddings inserts those of the embeddings whose user and
	// entity have none stored, as PutEntityEmbeddings does, and leaves the
	// stored ones as they are: a vector computed from what may be an older
	// version of the entity never replaces one its writer stored.
	AddEntityEmbeddings(ctx context.Context, es []EntityEmbedding) error
	// EntityEmbeddings returns the user's stored embeddings of those of ids
	// that have one, in the order of ids, with their vectors.
	EntityEmbeddings(ctx context.Context, userID string, ids []string) ([]EntityEmbedding, error)
	// DeleteEntityEmbeddings deletes the user's embeddings of ids; ids
	// without one are ignored.
	DeleteEntityEmbeddings(ctx context.Context, userID string, ids []string) error
	// EntityEmbeddingsOutside returns up to limit keys, of every user, of
	// embeddings whose embedder is not embedder, ordered by user id, then
	// entity id, starting after the key after (the zero key: from the
	// start). Maintenance commands page through them with it.
	EntityEmbeddingsOutside(ctx context.Context, embedder string, after EntityKey, limit int) ([]EntityKey, error)
}

// EntityStore is the portable entity-embedding store. It is safe for
// concurrent use.
type EntityStore struct {
	d   EntityDriver
	now func() time.Time
}

// NewEntityStore returns an EntityStore over d. The driver is usually the
// memory driver of the same backend (vector/embedded and vector/pgvector
// implement both), which the caller closes.
func NewEntityStore(d EntityDriver) *EntityStore { return &EntityStore{d: d, now: time.Now} }

// Put stores embeddings, replacing those of the same entities. Each must
// name its user and entity, and have a vector of its space's dimension,
// of finite components. Vectors are stored packed to 8 bits (PackInt8):
// Get returns RoundInt8 of what Put was given.
func (s *EntityStore) Put(ctx context.Context, es ...EntityEmbedding) error {
	out, err := s.valid(es)
	if err != nil || len(out) == 0 {
		return err
	}
	if err := s.d.PutEntityEmbeddings(ctx, out); err != nil {
		return fmt.Errorf("vector: put entity embeddings: %w", err)
	}
	return nil
}

// Add stores those of the embeddings whose entity has none stored, and
// leaves the others as they are (see EntityDriver.AddEntityEmbeddings): it
// is for a reader that embedded entities itself, so that the work is kept
// without racing the writer that keeps them current.
func (s *EntityStore) Add(ctx context.Context, es ...EntityEmbedding) error {
	out, err := s.valid(es)
	if err != nil || len(out) == 0 {
		return err
	}
	if err := s.d.AddEntityEmbeddings(ctx, out); err != nil {
		return fmt.Errorf("vector: add entity embeddings: %w", err)
	}
	return nil
}

// valid checks embeddings to store and returns them with their UpdatedAt
// set.
func (s *EntityStore) valid(es []EntityEmbedding) ([]EntityEmbedding, error) {
	if len(es) == 0 {
		return nil, nil
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	out := make([]EntityEmbedding, len(es))
	for i, e := range es {
		switch {
		case e.UserID == "":
			return nil, invalid("user_id", "is required")
		case e.EntityID == "":
			return nil, invalid("entity_id", "is required")
		}
		if err := validSpace(e.Space); err != nil {
			return nil, err
		}
		if len(e.Embedding) != e.Space.Dimension {
			return nil, invalid("embedding", "has %d dimensions, its space %s has %d", len(e.Embedding), e.Space.Embedder, e.Space.Dimension)
		}
		if !Finite(e.Embedding) {
			return nil, invalid("embedding", "has a component that is not a finite number")
		}
		if e.UpdatedAt.IsZero() {
			e.UpdatedAt = now
		}
		e.UpdatedAt = e.UpdatedAt.UTC().Truncate(time.Microsecond)
		out[i] = e
	}
	return out, nil
}

// Get returns the user's stored embeddings of those of ids that have one,
// in the order of ids.
func (s *EntityStore) Get(ctx context.Context, userID string, ids []string) ([]EntityEmbedding, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.d.EntityEmbeddings(ctx, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector: entity embeddings: %w", err)
	}
	return out, nil
}

// Delete deletes the user's embeddings of ids.
func (s *EntityStore) Delete(ctx context.Context, userID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.d.DeleteEntityEmbeddings(ctx, userID, ids); err != nil {
		return fmt.Errorf("vector: delete entity embeddings: %w", err)
	}
	return nil
}

// Outside returns a page of the keys of embeddings that another embedder
// than embedder made (see EntityDriver.EntityEmbeddingsOutside).
func (s *EntityStore) Outside(ctx context.Context, embedder string, after EntityKey, limit int) ([]EntityKey, error) {
	if limit <= 0 {
		return nil, invalid("limit", "must be positive, got %d", limit)
	}
	out, err := s.d.EntityEmbeddingsOutside(ctx, embedder, after, limit)
	if err != nil {
		return nil, fmt.Errorf("vector: entity embeddings outside %s: %w", embedder, err)
	}
	return out, nil
}
