package postgres

import (
	"context"
	"strings"
)

// ScreenEntityText implements graph.TextScreener. lower() folds by the
// collation; under "C" it folds ASCII only, as the screen assumes, and a
// row with any other character (its text is longer in bytes than in
// characters) is kept whatever its words. The snapshot's text is jsonb's
// own output, the same the driver decodes entities from.
func (t *tx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	a := args{userID, ids}
	conds := make([]string, 0, len(words)+1)
	for _, w := range words {
		conds = append(conds, `strpos(s.text, `+a.add(w)+`) > 0`)
	}
	conds = append(conds, `octet_length(s.raw) != char_length(s.raw)`)
	// OFFSET 0 keeps each subquery from being inlined into the
	// conditions, which would convert the snapshot to text and lower it
	// once per condition (three times the time at 10,000 entities).
	rows, err := query(ctx, t, func(r rowScanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT s.id FROM (
		  SELECT r.id, r.raw, lower(r.raw COLLATE "C") AS text FROM (
		    SELECT e.id, e.entity_type || ' ' || e.canonical_name || ' ' || e.snapshot::text AS raw
		    FROM entities e WHERE e.user_id = $1 AND e.id = ANY($2) OFFSET 0) r
		  OFFSET 0) s
		WHERE `+strings.Join(conds, " OR "), a...)
	if err != nil {
		return nil, wrap("screen entity text", err)
	}
	return rows, nil
}
