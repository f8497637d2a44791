package embedded

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/graph"
)

// eraseChunk bounds the ids of one statement of Erase, below SQLite's
// parameter limit.
const eraseChunk = 500

// Erase implements graph.Eraser: one statement per kind of row and chunk of
// ids. Deleting an entity row deletes its full-text entry (the triggers of
// migration 009); the store's write connections run with secure_delete, so
// the bytes freed are zeroed, except the tokens of the contentless
// entity_search, which Compact removes (docs/forgetting.md).
func (t *tx) Erase(ctx context.Context, e graph.Erasure) (graph.ErasedCounts, error) {
	var n graph.ErasedCounts
	del := func(count *int, what, head string, ids []string, tail string) error {
		return chunks(len(ids), eraseChunk, func(start, end int) error {
			args := make([]any, 0, 1+end-start)
			args = append(args, e.UserID)
			for _, id := range ids[start:end] {
				args = append(args, id)
			}
			res, err := t.exec(ctx, head+qmarks(end-start)+tail, args...)
			if err != nil {
				return wrap(what, err)
			}
			k, err := res.RowsAffected()
			*count += int(k)
			return wrap(what, err)
		})
	}
	rels, err := t.relationshipsOf(ctx, e.UserID, e.EntityIDs)
	if err != nil {
		return n, err
	}
	touched, err := t.idsIn(ctx, `SELECT DISTINCT relationship_id FROM relationship_observations WHERE user_id = ? AND source_id IN (`, e.UserID, e.SourceIDs)
	if err != nil {
		return n, err
	}
	n.Touched = touched
	steps := []struct {
		count      *int
		what, head string
		ids        []string
	}{
		{&n.RelationshipObservations, "erase relationship observations", `DELETE FROM relationship_observations WHERE user_id = ? AND relationship_id IN (`, rels},
		{&n.RelationshipObservations, "erase relationship observations", `DELETE FROM relationship_observations WHERE user_id = ? AND source_id IN (`, e.SourceIDs},
		{&n.Relationships, "erase relationships", `DELETE FROM relationships WHERE user_id = ? AND id IN (`, rels},
		{&n.Relationships, "erase relationships", `DELETE FROM relationships WHERE user_id = ? AND NOT EXISTS (SELECT 1 FROM relationship_observations o
			WHERE o.user_id = relationships.user_id AND o.relationship_id = relationships.id) AND id IN (`, touched},
		{&n.Observations, "erase observations", `DELETE FROM observations WHERE user_id = ? AND id IN (`, e.ObservationIDs},
		{&n.RawFragments, "erase raw fragments", `DELETE FROM raw_fragments WHERE user_id = ? AND entity_id IN (`, e.EntityIDs},
		{&n.RawFragments, "erase raw fragments", `DELETE FROM raw_fragments WHERE user_id = ? AND source_id IN (`, e.SourceIDs},
		{&n.TimelineEvents, "erase timeline events", `DELETE FROM timeline_events WHERE user_id = ? AND entity_id IN (`, e.EntityIDs},
		{&n.TimelineEvents, "erase timeline events", `DELETE FROM timeline_events WHERE user_id = ? AND source_id IN (`, e.SourceIDs},
		{&n.Identifiers, "erase identifiers", `DELETE FROM entity_identifiers WHERE user_id = ? AND entity_id IN (`, e.EntityIDs},
		{&n.Entities, "erase entities", `DELETE FROM entities WHERE user_id = ? AND id IN (`, e.EntityIDs},
		{&n.Sources, "erase sources", `DELETE FROM sources WHERE user_id = ? AND id IN (`, e.SourceIDs},
	}
	for _, s := range steps {
		if err := del(s.count, s.what, s.head, s.ids, `)`); err != nil {
			return graph.ErasedCounts{}, err
		}
	}
	return n, nil
}

// relationshipsOf returns the ids of every relationship, in any period,
// with an end among entityIDs.
func (t *tx) relationshipsOf(ctx context.Context, userID string, entityIDs []string) ([]string, error) {
	out, err := t.idsIn(ctx, `SELECT id FROM relationships WHERE user_id = ? AND source_entity_id IN (`, userID, entityIDs)
	if err != nil {
		return nil, err
	}
	in, err := t.idsIn(ctx, `SELECT id FROM relationships WHERE user_id = ? AND target_entity_id IN (`, userID, entityIDs)
	if err != nil {
		return nil, err
	}
	for _, id := range in {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// idsIn runs head+"?, …)" with userID and each chunk of ids, and returns
// the distinct ids it selects.
func (t *tx) idsIn(ctx context.Context, head, userID string, ids []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	err := chunks(len(ids), eraseChunk, func(start, end int) error {
		args := make([]any, 0, 1+end-start)
		args = append(args, userID)
		for _, id := range ids[start:end] {
			args = append(args, id)
		}
		rows, err := t.query(ctx, head+qmarks(end-start)+`)`, args...)
		if err != nil {
			return wrap("erase: read ids", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return wrap("erase: read ids", err)
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		return wrap("erase: read ids", rows.Err())
	})
	return out, err
}

// Compact implements graph.Compactor. entity_search is contentless: a
// deleted or rewritten entity's tokens stay in the index's segments, masked
// by a tombstone, until the segments merge (FTS5's secure-delete cannot
// remove tokens it does not know). An optimize merges every segment into
// one, leaving them out, and the write-ahead log, whose older frames still
// hold pages as they were, is then copied into the (securely deleted)
// database file and emptied. The optimize rewrites the whole entity index:
// its cost grows with the number of entities, paid once per erasure.
func (d *Driver) Compact(ctx context.Context) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	if _, err := d.db.Write.ExecContext(ctx, `INSERT INTO entity_search (entity_search) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("graph/embedded: compact: optimize entity_search: %w", err)
	}
	return d.db.TruncateWAL(ctx)
}
