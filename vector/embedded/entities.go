package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/vector"
)

var _ vector.EntityDriver = (*Driver)(nil)

// PutEntityEmbeddings implements vector.EntityDriver.
func (d *Driver) PutEntityEmbeddings(ctx context.Context, es []vector.EntityEmbedding) error {
	return d.putEntityEmbeddings(ctx, "put", es, `DO UPDATE SET embedder = excluded.embedder, dimension = excluded.dimension,
		text_hash = excluded.text_hash, embedding = excluded.embedding, updated_at = excluded.updated_at`)
}

// AddEntityEmbeddings implements vector.EntityDriver.
func (d *Driver) AddEntityEmbeddings(ctx context.Context, es []vector.EntityEmbedding) error {
	return d.putEntityEmbeddings(ctx, "add", es, `DO NOTHING`)
}

// putEntityEmbeddings inserts es, doing onConflict for those stored. A
// user with an erasure recorded (running or done) gets none: the outbox
// worker of a server may embed entities it read before `cairn admin erase`
// (another process) deleted them and their embeddings, and its write
// would leave the erased user's rows behind. Checked in the statement,
// so that an erasure that begins after the check erases what it wrote.
func (d *Driver) putEntityEmbeddings(ctx context.Context, what string, es []vector.EntityEmbedding, onConflict string) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO entity_embeddings
			(user_id, entity_id, embedder, dimension, text_hash, embedding, updated_at)
			SELECT ?1, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM user_erasures WHERE user_id = ?1)
			ON CONFLICT (user_id, entity_id) `+onConflict)
		if err != nil {
			return fmt.Errorf("vector/embedded: %s entity embeddings: %w", what, err)
		}
		defer st.Close()
		for _, e := range es {
			if _, err := st.ExecContext(ctx, e.UserID, e.EntityID, e.Space.Embedder, e.Space.Dimension, e.TextHash,
				vector.PackInt8(e.Embedding), e.UpdatedAt.UnixMicro()); err != nil {
				return fmt.Errorf("vector/embedded: %s entity embeddings: %w", what, err)
			}
		}
		return nil
	})
}

// EntityEmbeddings implements vector.EntityDriver.
func (d *Driver) EntityEmbeddings(ctx context.Context, userID string, ids []string) ([]vector.EntityEmbedding, error) {
	byID := make(map[string]vector.EntityEmbedding, len(ids))
	// SQLite allows 32,766 parameters; stay well below.
	const chunk = 5000
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, 0, len(part)+1)
		args = append(args, userID)
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := d.db.Read.QueryContext(ctx, `SELECT entity_id, embedder, dimension, text_hash, embedding, updated_at
			FROM entity_embeddings WHERE user_id = ? AND entity_id IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: entity embeddings: %w", err)
		}
		for rows.Next() {
			e := vector.EntityEmbedding{UserID: userID}
			var blob []byte
			var updated int64
			if err := rows.Scan(&e.EntityID, &e.Space.Embedder, &e.Space.Dimension, &e.TextHash, &blob, &updated); err != nil {
				rows.Close()
				return nil, fmt.Errorf("vector/embedded: entity embeddings: %w", err)
			}
			if e.Embedding, err = vector.UnpackInt8(blob, e.Space.Dimension); err != nil {
				rows.Close()
				return nil, fmt.Errorf("vector/embedded: entity embeddings: %s: %w", e.EntityID, err)
			}
			e.UpdatedAt = time.UnixMicro(updated).UTC()
			byID[e.EntityID] = e
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: entity embeddings: %w", err)
		}
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
	return d.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM entity_embeddings WHERE user_id = ? AND entity_id = ?`, userID, id); err != nil {
				return fmt.Errorf("vector/embedded: delete entity embeddings: %w", err)
			}
		}
		return nil
	})
}

// EntityEmbeddingsOutside implements vector.EntityDriver.
func (d *Driver) EntityEmbeddingsOutside(ctx context.Context, embedder string, after vector.EntityKey, limit int) ([]vector.EntityKey, error) {
	rows, err := d.db.Read.QueryContext(ctx, `SELECT user_id, entity_id FROM entity_embeddings
		WHERE embedder <> ? AND (user_id > ? OR (user_id = ? AND entity_id > ?))
		ORDER BY user_id, entity_id LIMIT ?`, embedder, after.UserID, after.UserID, after.EntityID, limit)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: entity embeddings outside: %w", err)
	}
	defer rows.Close()
	var out []vector.EntityKey
	for rows.Next() {
		var k vector.EntityKey
		if err := rows.Scan(&k.UserID, &k.EntityID); err != nil {
			return nil, fmt.Errorf("vector/embedded: entity embeddings outside: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: entity embeddings outside: %w", err)
	}
	return out, nil
}
