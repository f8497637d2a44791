package embedded

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

var _ graph.TextSigBackfiller = (*Driver)(nil)

// BackfillTextSigs implements graph.TextSigBackfiller in one write
// transaction, so that no other write comes between reading an entity and
// storing its signature. entities_text_sig_missing (migration 016) lists
// the entities without one.
func (d *Driver) BackfillTextSigs(ctx context.Context, after string, limit int) (last string, n int, err error) {
	err = d.Update(ctx, func(dt graph.DriverTx) error {
		t := dt.(*tx)
		rows, err := t.query(ctx, `SELECT id, entity_type, canonical_name, snapshot FROM entities
			WHERE text_sig IS NULL AND id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		var ids []string
		var sigs [][]byte
		var keys []string
		err = eachRow(rows, func(r *sql.Rows) error {
			var e graph.Entity
			var snap string
			if err := r.Scan(&e.ID, &e.Type, &e.CanonicalName, &snap); err != nil {
				return err
			}
			if e.Snapshot, err = jsoncodec.Map(snap); err != nil {
				return fmt.Errorf("entity %s: %w", e.ID, err)
			}
			ids, sigs, keys = append(ids, e.ID), append(sigs, graph.EntityTextSig(e)), append(keys, graph.NameKeysJSON(e.CanonicalName))
			return nil
		})
		if err != nil {
			return err
		}
		for i, id := range ids {
			if _, err := t.exec(ctx, `UPDATE entities SET text_sig = ?, name_keys = ? WHERE id = ?`, sigs[i], keys[i], id); err != nil {
				return err
			}
		}
		last, n = "", len(ids)
		if n > 0 {
			last = ids[n-1]
		}
		return nil
	})
	return last, n, wrap("backfill text signatures", err)
}
