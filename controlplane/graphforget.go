package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/cairnkg/cairn/knowledge"
)

// The Store keeps retractions and tombstones of graph data for the
// knowledge service (issue 37).
var _ knowledge.GraphForgetStore = (*Store)(nil)

// Retract implements knowledge.GraphForgetStore: an observation retracted
// already keeps its first retraction.
func (s *Store) Retract(ctx context.Context, rs []knowledge.Retraction) (int, error) {
	n := 0
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		n = 0
		for _, r := range rs {
			res, err := tx.ExecContext(ctx, `INSERT INTO graph_retractions
				(user_id, observation_id, kind, subject_id, source_id, retracted_at, actor, reason)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
				r.UserID, r.ObservationID, r.Kind, r.SubjectID, r.SourceID, micros(r.At), r.Actor, r.Reason)
			if err != nil {
				return wrap("retract", err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return wrap("retract", err)
			}
			n += int(k)
		}
		return nil
	})
	return n, err
}

// Unretract implements knowledge.GraphForgetStore.
func (s *Store) Unretract(ctx context.Context, userID string, ids []string) (int, error) {
	return s.deleteByIDs(ctx, "unretract", `DELETE FROM graph_retractions WHERE user_id = $1 AND observation_id IN (`, userID, ids)
}

// Retractions implements knowledge.GraphForgetStore.
func (s *Store) Retractions(ctx context.Context, userID string, ids []string) ([]knowledge.Retraction, error) {
	var out []knowledge.Retraction
	for start := 0; start < len(ids); start += rejectedChunk {
		in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
		rs, err := s.readRetractions(ctx, `WHERE user_id = $1 AND observation_id IN (`+in+`)`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// AllRetractions implements knowledge.GraphForgetStore.
func (s *Store) AllRetractions(ctx context.Context, userID string) ([]knowledge.Retraction, error) {
	return s.readRetractions(ctx, `WHERE user_id = $1`, userID)
}

func (s *Store) readRetractions(ctx context.Context, where string, args ...any) ([]knowledge.Retraction, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, observation_id, kind, subject_id, source_id, retracted_at, actor, reason
		FROM graph_retractions `+where+` ORDER BY observation_id`, args...)
	if err != nil {
		return nil, wrap("read retractions", err)
	}
	defer rows.Close()
	var out []knowledge.Retraction
	for rows.Next() {
		var r knowledge.Retraction
		var at sql.NullInt64
		if err := rows.Scan(&r.UserID, &r.ObservationID, &r.Kind, &r.SubjectID, &r.SourceID, &at, &r.Actor, &r.Reason); err != nil {
			return nil, wrap("read retractions", err)
		}
		r.At = fromMicros(at)
		out = append(out, r)
	}
	return out, wrap("read retractions", rows.Err())
}

// AddGraphTombstones implements knowledge.GraphForgetStore: a tombstone
// recorded already is kept as it is.
func (s *Store) AddGraphTombstones(ctx context.Context, ts []knowledge.GraphTombstone) error {
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		for _, t := range ts {
			counts := []byte("{}") // what went with an erasure counts nothing of its own
			if t.Counts != nil {
				var err error
				if counts, err = json.Marshal(t.Counts); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO graph_tombstones (user_id, kind, id, erased_at, actor, reason, counts)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
				t.UserID, t.Kind, t.ID, micros(t.ErasedAt), t.Actor, t.Reason, string(counts)); err != nil {
				return wrap("add graph tombstone", err)
			}
		}
		return nil
	})
}

// GraphTombstones implements knowledge.GraphForgetStore.
func (s *Store) GraphTombstones(ctx context.Context, userID string) ([]knowledge.GraphTombstone, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, kind, id, erased_at, actor, reason, counts
		FROM graph_tombstones WHERE user_id = $1 ORDER BY erased_at, kind, id`, userID)
	if err != nil {
		return nil, wrap("read graph tombstones", err)
	}
	defer rows.Close()
	var out []knowledge.GraphTombstone
	for rows.Next() {
		var t knowledge.GraphTombstone
		var at sql.NullInt64
		var counts string
		if err := rows.Scan(&t.UserID, &t.Kind, &t.ID, &at, &t.Actor, &t.Reason, &counts); err != nil {
			return nil, wrap("read graph tombstones", err)
		}
		t.ErasedAt = fromMicros(at)
		if err := json.Unmarshal([]byte(counts), &t.Counts); err != nil {
			return nil, wrap("read graph tombstones", err)
		}
		out = append(out, t)
	}
	return out, wrap("read graph tombstones", rows.Err())
}

// EraseContradictions implements knowledge.GraphForgetStore: the
// contradictions about the entities or naming the observations (as the
// current or the new value), the rejections and retractions of those
// observations, in one transaction.
func (s *Store) EraseContradictions(ctx context.Context, userID string, entityIDs, observationIDs []string) (int, error) {
	var n int
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		n = 0
		for _, st := range []struct {
			head  string
			ids   []string
			count bool
		}{
			{`DELETE FROM contradictions WHERE user_id = $1 AND entity_id IN (`, entityIDs, true},
			{`DELETE FROM contradictions WHERE user_id = $1 AND new_observation_id IN (`, observationIDs, true},
			{`DELETE FROM contradictions WHERE user_id = $1 AND current_observation_id IN (`, observationIDs, true},
			{`DELETE FROM rejected_observations WHERE user_id = $1 AND entity_id IN (`, entityIDs, false},
			{`DELETE FROM rejected_observations WHERE user_id = $1 AND observation_id IN (`, observationIDs, false},
			{`DELETE FROM graph_retractions WHERE user_id = $1 AND subject_id IN (`, entityIDs, false},
			{`DELETE FROM graph_retractions WHERE user_id = $1 AND observation_id IN (`, observationIDs, false},
		} {
			k, err := deleteIn(ctx, tx, "erase contradictions", st.head, userID, st.ids)
			if err != nil {
				return err
			}
			if st.count {
				n += k
			}
		}
		return nil
	})
	return n, err
}

// deleteByIDs runs deleteIn in a transaction of its own.
func (s *Store) deleteByIDs(ctx context.Context, what, head, userID string, ids []string) (int, error) {
	var n int
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		var err error
		n, err = deleteIn(ctx, tx, what, head, userID, ids)
		return err
	})
	return n, err
}

// deleteIn runs head+"$2, …)" over ids in chunks, with userID as $1, and
// returns how many rows it deleted.
func deleteIn(ctx context.Context, tx *sql.Tx, what, head, userID string, ids []string) (int, error) {
	n := 0
	for start := 0; start < len(ids); start += rejectedChunk {
		in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
		res, err := tx.ExecContext(ctx, head+in+`)`, args...)
		if err != nil {
			return 0, wrap(what, err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, wrap(what, err)
		}
		n += int(k)
	}
	return n, nil
}
