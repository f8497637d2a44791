package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// Forgetting. Retracted memories and the content updates replace move to
// memory_versions; erased ones leave a row in memory_tombstones and
// nothing else. Every removal from memories counts in its collection's
// memory_spaces.removals, which the vector cache compares (see shard).
//
// An erasure runs, as every write does, on a connection with PRAGMA
// secure_delete on (db/sqlite), so that SQLite overwrites the deleted rows'
// bytes with zeros rather than leaving them in free space, and memories_fts
// has FTS5's secure-delete option
// (migration 025), so that the index drops the rows' tokens at once rather
// than masking them until a merge. What the write-ahead log still holds
// goes with Compact's checkpoint.

// byIDs is the condition "the user's rows with these ids" (all the user's
// rows when ids is nil) on column user, and its arguments. The memories
// table is read as +user_id, which keeps SQLite on its unique index on id
// (see Get).
func byIDs(user, userID string, ids []string) (string, []any) {
	args := make([]any, 1, 1+len(ids))
	args[0] = userID
	if ids == nil {
		return user + ` = ?`, args
	}
	for _, id := range ids {
		args = append(args, id)
	}
	return user + ` = ? AND id IN (` + placeholders(len(ids)) + `)`, args
}

// versionColumns are the columns memory_versions shares with memories.
const versionColumns = `id, user_id, collection, title, text, tags, confidence, metadata, entity_ids, source_id, types, created_at,
	embedding, occurred_at`

// Update implements vector.Driver. The new content gets a seq above every
// other, as Replace gives its rows.
func (d *Driver) Update(ctx context.Context, m vector.Memory, r vector.Removal) (vector.Memory, error) {
	err := d.write(ctx, func(tx *sql.Tx) error {
		n, err := moveToVersions(ctx, tx, m.UserID, []string{m.ID}, vector.VersionSuperseded, r)
		if err != nil {
			return err
		}
		if n == 0 {
			return &vector.NotFoundError{ID: m.ID}
		}
		var top int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM memories`).Scan(&top); err != nil {
			return fmt.Errorf("vector/embedded: update: %w", err)
		}
		return insert(ctx, tx, []vector.Memory{m}, top)
	})
	if err != nil {
		return vector.Memory{}, err
	}
	m.Embedding = nil
	return m, nil
}

// Retract implements vector.Driver.
func (d *Driver) Retract(ctx context.Context, userID string, ids []string, r vector.Removal) ([]string, error) {
	var live []vector.Memory
	err := d.write(ctx, func(tx *sql.Tx) error {
		var err error
		if live, err = liveIDs(ctx, tx, userID, ids); err != nil {
			return err
		}
		_, err = moveToVersions(ctx, tx, userID, ids, vector.VersionRetracted, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(live))
	for i, m := range live {
		out[i] = m.ID
	}
	return out, nil
}

// liveIDs returns the ids and collections of those of ids that are live,
// in the order of ids.
func liveIDs(ctx context.Context, tx *sql.Tx, userID string, ids []string) ([]vector.Memory, error) {
	where, args := byIDs("+user_id", userID, ids)
	rows, err := tx.QueryContext(ctx, `SELECT id, collection FROM memories WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: %w", err)
	}
	defer rows.Close()
	found := map[string]string{}
	for rows.Next() {
		var id, c string
		if err := rows.Scan(&id, &c); err != nil {
			return nil, fmt.Errorf("vector/embedded: %w", err)
		}
		found[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: %w", err)
	}
	var out []vector.Memory
	for _, id := range ids {
		if c, ok := found[id]; ok {
			out = append(out, vector.Memory{ID: id, Collection: c})
		}
	}
	return out, nil
}

// moveToVersions copies the user's live memories with these ids to
// memory_versions in state, deletes them and counts the removals of their
// collections; it returns how many it moved.
func moveToVersions(ctx context.Context, tx *sql.Tx, userID string, ids []string, state vector.VersionState, r vector.Removal) (int64, error) {
	where, args := byIDs("+user_id", userID, ids)
	args = append([]any{string(state), r.At.UnixMicro(), r.Actor, r.Reason}, args...)
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_versions (`+versionColumns+`, state, removed_at, actor, reason)
		SELECT `+versionColumns+`, ?, ?, ?, ? FROM memories WHERE `+where+` ORDER BY seq`, args...); err != nil {
		return 0, fmt.Errorf("vector/embedded: %s: %w", state, err)
	}
	return removeLive(ctx, tx, userID, ids)
}

// removeLive deletes the user's live memories with these ids (their tags,
// entity links and full-text entries go with them) and counts the
// removals of their collections.
func removeLive(ctx context.Context, tx *sql.Tx, userID string, ids []string) (int64, error) {
	where, args := byIDs("+user_id", userID, ids)
	if _, err := tx.ExecContext(ctx, `UPDATE memory_spaces SET removals = removals + 1 WHERE user_id = ? AND collection IN
		(SELECT collection FROM memories WHERE `+where+`)`, append([]any{userID}, args...)...); err != nil {
		return 0, fmt.Errorf("vector/embedded: remove: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE `+where, args...)
	if err != nil {
		return 0, fmt.Errorf("vector/embedded: remove: %w", err)
	}
	return res.RowsAffected()
}

// Erase implements vector.Driver. Every write connection of the store has
// SQLite's secure_delete on (db/sqlite), so the rows it deletes leave no
// bytes behind in the file's free space.
func (d *Driver) Erase(ctx context.Context, userID string, ids []string, r vector.Removal) ([]vector.Tombstone, vector.Erased, error) {
	var ts []vector.Tombstone
	var n vector.Erased
	err := d.write(ctx, func(tx *sql.Tx) error {
		var err error
		ts, n, err = erase(ctx, tx, userID, ids, r)
		return err
	})
	if err != nil {
		return nil, vector.Erased{}, err
	}
	return ts, n, nil
}

func erase(ctx context.Context, tx *sql.Tx, userID string, ids []string, r vector.Removal) ([]vector.Tombstone, vector.Erased, error) {
	var n vector.Erased
	live, err := liveIDs(ctx, tx, userID, ids)
	if err != nil {
		return nil, n, err
	}
	coll := map[string]string{}
	for _, m := range live {
		coll[m.ID] = m.Collection
	}
	n.Memories = len(live)
	where, args := byIDs("user_id", userID, ids)
	rows, err := tx.QueryContext(ctx, `SELECT id, collection, state FROM memory_versions WHERE `+where, args...)
	if err != nil {
		return nil, n, fmt.Errorf("vector/embedded: erase: %w", err)
	}
	for rows.Next() {
		var id, c, state string
		if err := rows.Scan(&id, &c, &state); err != nil {
			rows.Close()
			return nil, n, fmt.Errorf("vector/embedded: erase: %w", err)
		}
		if _, ok := coll[id]; !ok {
			coll[id] = c
		}
		n.AddVersion(vector.VersionState(state))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, n, fmt.Errorf("vector/embedded: erase: %w", err)
	}
	if _, err := removeLive(ctx, tx, userID, ids); err != nil {
		return nil, n, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_versions WHERE `+where, args...); err != nil {
		return nil, n, fmt.Errorf("vector/embedded: erase: %w", err)
	}
	out := vector.TombstonesOf(userID, ids, coll, r)
	for _, t := range out {
		if err := insertTombstone(ctx, tx, t); err != nil {
			return nil, n, err
		}
	}
	return out, n, nil
}

func insertTombstone(ctx context.Context, tx *sql.Tx, t vector.Tombstone) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_tombstones (id, user_id, collection, erased_at, actor, reason)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, t.ID, t.UserID, t.Collection, t.At.UnixMicro(), t.Actor, t.Reason); err != nil {
		return fmt.Errorf("vector/embedded: tombstone %s: %w", t.ID, err)
	}
	return nil
}

// Compact implements vector.Compactor: a checkpoint that copies the whole
// write-ahead log into the database file and truncates the log, so that
// the frames of pages as they were before an erasure are gone
// (sqlite.DB.TruncateWAL, which the graph's compaction runs too).
func (d *Driver) Compact(ctx context.Context) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	if err := d.db.TruncateWAL(ctx); err != nil {
		return fmt.Errorf("vector/embedded: compact: %w", err)
	}
	return nil
}

// Versions implements vector.Driver.
func (d *Driver) Versions(ctx context.Context, userID string, ids []string) ([]vector.Version, error) {
	where, args := byIDs("user_id", userID, ids)
	rows, err := d.db.Read.QueryContext(ctx, `SELECT `+memoryColumns+`, m.state, m.removed_at, m.actor, m.reason
		FROM memory_versions m WHERE `+where+` ORDER BY m.id, m.removed_at, m.vseq`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: versions: %w", err)
	}
	defer rows.Close()
	var out []vector.Version
	for rows.Next() {
		var (
			v       vector.Version
			state   string
			removed int64
		)
		m, err := scanMemory(rows, &state, &removed, &v.Actor, &v.Reason)
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: versions: %w", err)
		}
		v.Memory, v.State, v.At = m, vector.VersionState(state), time.UnixMicro(removed).UTC()
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: versions: %w", err)
	}
	return out, nil
}

// Tombstones implements vector.Driver.
func (d *Driver) Tombstones(ctx context.Context, userID string, ids []string) ([]vector.Tombstone, error) {
	where, args := byIDs("user_id", userID, ids)
	rows, err := d.db.Read.QueryContext(ctx, `SELECT id, user_id, collection, erased_at, actor, reason FROM memory_tombstones
		WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: tombstones: %w", err)
	}
	defer rows.Close()
	var out []vector.Tombstone
	for rows.Next() {
		var (
			t  vector.Tombstone
			at int64
		)
		if err := rows.Scan(&t.ID, &t.UserID, &t.Collection, &at, &t.Actor, &t.Reason); err != nil {
			return nil, fmt.Errorf("vector/embedded: tombstones: %w", err)
		}
		t.At = time.UnixMicro(at).UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: tombstones: %w", err)
	}
	return out, nil
}

// InsertTombstones implements vector.Driver.
func (d *Driver) InsertTombstones(ctx context.Context, ts []vector.Tombstone) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		for _, t := range ts {
			if err := insertTombstone(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// InsertVersions implements vector.Driver.
func (d *Driver) InsertVersions(ctx context.Context, vs []vector.Version) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		for _, v := range vs {
			row, err := rowValues(v.Memory)
			if err != nil {
				return fmt.Errorf("vector/embedded: version of %s: %w", v.ID, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO memory_versions (`+versionColumns+`, state, removed_at, actor, reason)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				append(row, string(v.State), v.At.UnixMicro(), v.Actor, v.Reason)...); err != nil {
				return fmt.Errorf("vector/embedded: version of %s: %w", v.ID, err)
			}
		}
		return nil
	})
}

// DropSpaces implements vector.ForgetDriver.
func (d *Driver) DropSpaces(ctx context.Context, userID string) (int, error) {
	n := 0
	err := d.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM memory_spaces AS s WHERE s.user_id = ?
		AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.user_id = s.user_id AND m.collection = s.collection)
		AND NOT EXISTS (SELECT 1 FROM memory_versions v WHERE v.user_id = s.user_id AND v.collection = s.collection)`, userID)
		if err != nil {
			return fmt.Errorf("vector/embedded: drop spaces: %w", err)
		}
		k, err := res.RowsAffected()
		n = int(k)
		return err
	})
	return n, err
}
