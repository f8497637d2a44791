package pgvector

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/vector"
)

// Forgetting. Retracted memories and the content updates replace move to
// memory_versions; erased ones leave a row in memory_tombstones and
// nothing else. A DELETE leaves dead tuples that no query reads and that
// VACUUM (autovacuum) reclaims; docs/forgetting.md says how to force it.

// versionColumns are the columns memory_versions shares with memories.
const versionColumns = `id, user_id, collection, title, text, tags, confidence, metadata, entity_ids, source_id, types, created_at,
	occurred_at, embedding`

// moveToVersions moves the user's live memories with these ids to
// memory_versions in state, and returns the ids it moved.
func moveToVersions(ctx context.Context, tx pgx.Tx, userID string, ids []string, state vector.VersionState, r vector.Removal) ([]string, error) {
	rows, err := tx.Query(ctx, `WITH gone AS (DELETE FROM memories WHERE user_id = $1 AND id = ANY($2) RETURNING `+versionColumns+`)
		INSERT INTO memory_versions (`+versionColumns+`, state, removed_at, actor, reason)
		SELECT `+versionColumns+`, $3, $4, $5, $6 FROM gone RETURNING id`,
		userID, ids, string(state), r.At.UnixMicro(), r.Actor, r.Reason)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Update implements vector.Driver.
func (d *Driver) Update(ctx context.Context, m vector.Memory, r vector.Removal) (vector.Memory, error) {
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		moved, err := moveToVersions(ctx, tx, m.UserID, []string{m.ID}, vector.VersionSuperseded, r)
		if err != nil {
			return err
		}
		if len(moved) == 0 {
			return &vector.NotFoundError{ID: m.ID}
		}
		return insertError(copyMemories(ctx, tx, []vector.Memory{m}))
	})
	if err != nil {
		return vector.Memory{}, fmt.Errorf("vector/pgvector: update %s: %w", m.ID, err)
	}
	m.Embedding = nil
	return m, nil
}

// Retract implements vector.Driver.
func (d *Driver) Retract(ctx context.Context, userID string, ids []string, r vector.Removal) ([]string, error) {
	var moved []string
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) (err error) {
		moved, err = moveToVersions(ctx, tx, userID, ids, vector.VersionRetracted, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: retract: %w", err)
	}
	return inOrder(ids, moved), nil
}

// inOrder returns those of ids that are in got, in the order of ids.
func inOrder(ids, got []string) []string {
	set := make(map[string]bool, len(got))
	for _, id := range got {
		set[id] = true
	}
	var out []string
	for _, id := range ids {
		if set[id] {
			out = append(out, id)
		}
	}
	return out
}

// Erase implements vector.Driver.
func (d *Driver) Erase(ctx context.Context, userID string, ids []string, r vector.Removal) ([]vector.Tombstone, vector.Erased, error) {
	var (
		out []vector.Tombstone
		n   vector.Erased
	)
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		out, n = nil, vector.Erased{}
		coll := map[string]string{}
		rows, err := tx.Query(ctx, `DELETE FROM memories WHERE user_id = $1 AND id = ANY($2) RETURNING id, collection`, userID, ids)
		if err != nil {
			return err
		}
		var id, c, state string
		if _, err := pgx.ForEachRow(rows, []any{&id, &c}, func() error {
			coll[id] = c
			n.Memories++
			return nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `DELETE FROM memory_versions WHERE user_id = $1 AND id = ANY($2) RETURNING id, collection, state`, userID, ids)
		if err != nil {
			return err
		}
		if _, err := pgx.ForEachRow(rows, []any{&id, &c, &state}, func() error {
			if _, ok := coll[id]; !ok {
				coll[id] = c
			}
			n.AddVersion(vector.VersionState(state))
			return nil
		}); err != nil {
			return err
		}
		out = vector.TombstonesOf(userID, ids, coll, r)
		return insertTombstones(ctx, tx, out)
	})
	if err != nil {
		return nil, vector.Erased{}, fmt.Errorf("vector/pgvector: erase: %w", err)
	}
	return out, n, nil
}

// execer is a pool or a transaction.
type execer interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func insertTombstones(ctx context.Context, db execer, ts []vector.Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, t := range ts {
		b.Queue(`INSERT INTO memory_tombstones (id, user_id, collection, erased_at, actor, reason) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO NOTHING`, t.ID, t.UserID, t.Collection, t.At.UnixMicro(), t.Actor, t.Reason)
	}
	return db.SendBatch(ctx, b).Close()
}

// Versions implements vector.Driver.
func (d *Driver) Versions(ctx context.Context, userID string, ids []string) ([]vector.Version, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+memoryColumns+`, m.state, m.removed_at, m.actor, m.reason FROM memory_versions m
		WHERE m.user_id = $1 AND ($2::text[] IS NULL OR m.id = ANY($2)) ORDER BY m.id, m.removed_at, m.vseq`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: versions: %w", err)
	}
	var (
		out     []vector.Version
		state   string
		removed int64
		actor   string
		reason  string
	)
	_, err = scanMemories(rows, func(m vector.Memory) {
		out = append(out, vector.Version{Memory: m, State: vector.VersionState(state),
			Removal: vector.Removal{At: time.UnixMicro(removed).UTC(), Actor: actor, Reason: reason}})
	}, &state, &removed, &actor, &reason)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: versions: %w", err)
	}
	return out, nil
}

// Tombstones implements vector.Driver.
func (d *Driver) Tombstones(ctx context.Context, userID string, ids []string) ([]vector.Tombstone, error) {
	rows, err := d.pool.Query(ctx, `SELECT id, user_id, collection, erased_at, actor, reason FROM memory_tombstones
		WHERE user_id = $1 AND ($2::text[] IS NULL OR id = ANY($2)) ORDER BY id`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: tombstones: %w", err)
	}
	var (
		out []vector.Tombstone
		t   vector.Tombstone
		at  int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&t.ID, &t.UserID, &t.Collection, &at, &t.Actor, &t.Reason}, func() error {
		t.At = time.UnixMicro(at).UTC()
		out = append(out, t)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("vector/pgvector: tombstones: %w", err)
	}
	return out, nil
}

// InsertTombstones implements vector.Driver.
func (d *Driver) InsertTombstones(ctx context.Context, ts []vector.Tombstone) error {
	if err := insertTombstones(ctx, d.pool, ts); err != nil {
		return fmt.Errorf("vector/pgvector: tombstones: %w", err)
	}
	return nil
}

// InsertVersions implements vector.Driver.
func (d *Driver) InsertVersions(ctx context.Context, vs []vector.Version) error {
	_, err := d.pool.CopyFrom(ctx, pgx.Identifier{"memory_versions"},
		append(slices.Clone(contentColumns), "embedding", "state", "removed_at", "actor", "reason"),
		pgx.CopyFromSlice(len(vs), func(i int) ([]any, error) {
			v := vs[i]
			return append(contentValues(v.Memory), pgv.NewVector(v.Embedding), string(v.State), v.At.UnixMicro(), v.Actor, v.Reason), nil
		}))
	if err != nil {
		return fmt.Errorf("vector/pgvector: versions: %w", err)
	}
	return nil
}

// DropSpaces implements vector.ForgetDriver.
func (d *Driver) DropSpaces(ctx context.Context, userID string) (int, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM memory_spaces AS s WHERE s.user_id = $1
		AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.user_id = s.user_id AND m.collection = s.collection)
		AND NOT EXISTS (SELECT 1 FROM memory_versions v WHERE v.user_id = s.user_id AND v.collection = s.collection)`, userID)
	if err != nil {
		return 0, fmt.Errorf("vector/pgvector: drop spaces: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
