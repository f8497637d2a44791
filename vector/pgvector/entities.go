package pgvector

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/vector"
)

var _ vector.EntityDriver = (*Driver)(nil)

// PutEntityEmbeddings implements vector.EntityDriver: one statement, so all
// or none.
func (d *Driver) PutEntityEmbeddings(ctx context.Context, es []vector.EntityEmbedding) error {
	return d.putEntityEmbeddings(ctx, "put", es, `DO UPDATE SET embedder = excluded.embedder, dimension = excluded.dimension,
		text_hash = excluded.text_hash, embedding = excluded.embedding, updated_at = excluded.updated_at`)
}

// AddEntityEmbeddings implements vector.EntityDriver.
func (d *Driver) AddEntityEmbeddings(ctx context.Context, es []vector.EntityEmbedding) error {
	return d.putEntityEmbeddings(ctx, "add", es, `DO NOTHING`)
}

// putEntityEmbeddings inserts es, doing onConflict for those stored. A
// user with an erasure recorded (running or done) gets none, as on the
// embedded store (see there): an erasure whose row commits after the
// check erases what this wrote in a later step.
func (d *Driver) putEntityEmbeddings(ctx context.Context, what string, es []vector.EntityEmbedding, onConflict string) error {
	batch := &pgx.Batch{}
	for _, e := range es {
		batch.Queue(`INSERT INTO entity_embeddings
			(user_id, entity_id, embedder, dimension, text_hash, embedding, updated_at)
			SELECT $1::text, $2::text, $3::text, $4::integer, $5::text, $6::bytea, $7::bigint
			WHERE NOT EXISTS (SELECT 1 FROM user_erasures WHERE user_id = $1)
			ON CONFLICT (user_id, entity_id) `+onConflict,
			e.UserID, e.EntityID, e.Space.Embedder, e.Space.Dimension, e.TextHash, vector.PackInt8(e.Embedding), e.UpdatedAt.UnixMicro())
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, batch).Close() })
	if err != nil {
		return fmt.Errorf("vector/pgvector: %s entity embeddings: %w", what, err)
	}
	return nil
}

// EntityEmbeddings implements vector.EntityDriver.
func (d *Driver) EntityEmbeddings(ctx context.Context, userID string, ids []string) ([]vector.EntityEmbedding, error) {
	rows, err := d.pool.Query(ctx, `SELECT entity_id, embedder, dimension, text_hash, embedding, updated_at
		FROM entity_embeddings WHERE user_id = $1 AND entity_id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: entity embeddings: %w", err)
	}
	byID := make(map[string]vector.EntityEmbedding, len(ids))
	var (
		e       vector.EntityEmbedding
		packed  []byte
		updated int64
	)
	_, err = pgx.ForEachRow(rows, []any{&e.EntityID, &e.Space.Embedder, &e.Space.Dimension, &e.TextHash, &packed, &updated}, func() error {
		vec, err := vector.UnpackInt8(packed, e.Space.Dimension)
		if err != nil {
			return fmt.Errorf("%s: %w", e.EntityID, err)
		}
		e.UserID, e.Embedding, e.UpdatedAt = userID, vec, time.UnixMicro(updated).UTC()
		byID[e.EntityID] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: entity embeddings: %w", err)
	}
	out := make([]vector.EntityEmbedding, 0, len(byID))
	for _, id := range ids {
		if e, ok := byID[id]; ok {
			out = append(out, e)
			delete(byID, id)
		}
	}
	return out, nil
}

// DeleteEntityEmbeddings implements vector.EntityDriver.
func (d *Driver) DeleteEntityEmbeddings(ctx context.Context, userID string, ids []string) error {
	if _, err := d.pool.Exec(ctx, `DELETE FROM entity_embeddings WHERE user_id = $1 AND entity_id = ANY($2)`, userID, ids); err != nil {
		return fmt.Errorf("vector/pgvector: delete entity embeddings: %w", err)
	}
	return nil
}

// EntityEmbeddingsOutside implements vector.EntityDriver.
func (d *Driver) EntityEmbeddingsOutside(ctx context.Context, embedder string, after vector.EntityKey, limit int) ([]vector.EntityKey, error) {
	rows, err := d.pool.Query(ctx, `SELECT user_id, entity_id FROM entity_embeddings
		WHERE embedder <> $1 AND (user_id, entity_id) > ($2 COLLATE "C", $3 COLLATE "C")
		ORDER BY user_id COLLATE "C", entity_id COLLATE "C" LIMIT $4`, embedder, after.UserID, after.EntityID, limit)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: entity embeddings outside: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[vector.EntityKey])
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: entity embeddings outside: %w", err)
	}
	return out, nil
}
