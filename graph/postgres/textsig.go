package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

var _ graph.TextSigBackfiller = (*Driver)(nil)

// BackfillTextSigs implements graph.TextSigBackfiller with one read and one
// update, which also stores the entity's completion keys (migration 032
// clears the signatures of the entities it found, which have none). The update stores a signature only where there is still none: an
// entity written between the two (PutEntities always stores one) keeps its
// writer's, since under READ COMMITTED the update checks the condition
// again on the row it would change. entities_text_sig_missing (migration
// 016) lists the entities without one.
func (d *Driver) BackfillTextSigs(ctx context.Context, after string, limit int) (string, int, error) {
	rows, err := d.pool.Query(ctx, `SELECT id, entity_type, canonical_name, snapshot::text FROM entities
		WHERE text_sig IS NULL AND id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return "", 0, wrap("backfill text signatures", err)
	}
	var ids []string
	var sigs [][]byte
	var keys []string
	var e graph.Entity
	var snap string
	_, err = pgx.ForEachRow(rows, []any{&e.ID, &e.Type, &e.CanonicalName, &snap}, func() error {
		m, err := jsoncodec.Map(snap)
		if err != nil {
			return fmt.Errorf("entity %s: %w", e.ID, err)
		}
		ids, sigs = append(ids, e.ID), append(sigs, graph.EntityTextSig(graph.Entity{Type: e.Type, CanonicalName: e.CanonicalName, Snapshot: m}))
		keys = append(keys, graph.NameKeysJSON(e.CanonicalName))
		return nil
	})
	if err != nil || len(ids) == 0 {
		return "", 0, wrap("backfill text signatures", err)
	}
	if _, err := d.pool.Exec(ctx, `UPDATE entities e SET text_sig = u.sig, name_keys = `+nameKeysSQL+`
		FROM unnest($1::text[], $2::bytea[], $3::text[]) AS u(id, sig, nk)
		WHERE e.id = u.id AND e.text_sig IS NULL`, ids, sigs, keys); err != nil {
		return "", 0, wrap("backfill text signatures", err)
	}
	return ids[len(ids)-1], len(ids), nil
}
