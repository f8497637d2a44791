package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge/files"
)

// A user's erasure (cairn admin erase --user, issue 37, docs/forgetting.md)
// runs in steps over every store; UserErasure is its job record, which
// makes a run that stops resumable: the next run of the same user's
// erasure takes it up at the step it had reached.

// UserErasure is the record of one erasure of all of a user's data.
type UserErasure struct {
	ID     string
	UserID string
	// Status is "running" or "done".
	Status string
	// Phase is the first step not yet done ("" once done).
	Phase string
	// Counts is how many rows of each kind the steps done so far erased.
	Counts     map[string]int
	Actor      string
	Reason     string
	StartedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
}

// The states of a UserErasure.
const (
	ErasureRunning = "running"
	ErasureDone    = "done"
)

const erasureCols = `id, user_id, status, phase, counts, actor, reason, started_at, updated_at, finished_at`

// scanErasure scans erasureCols, then into extra.
func scanErasure(row interface{ Scan(...any) error }, extra ...any) (UserErasure, error) {
	var e UserErasure
	var counts string
	var started, updated int64
	var finished sql.NullInt64
	if err := row.Scan(append([]any{&e.ID, &e.UserID, &e.Status, &e.Phase, &counts, &e.Actor, &e.Reason, &started, &updated, &finished}, extra...)...); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(counts), &e.Counts); err != nil {
		return e, fmt.Errorf("erasure %s: counts: %w", e.ID, err)
	}
	e.StartedAt = time.UnixMicro(started).UTC()
	e.UpdatedAt = time.UnixMicro(updated).UTC()
	e.FinishedAt = fromMicros(finished)
	return e, nil
}

// ErasureRun is who runs an erasure, and for how long it holds it before
// renewing: one run at a time works on a user's erasure.
type ErasureRun struct {
	// Runner names the run: its host, process id and a random part
	// (NewErasureRunner).
	Runner string
	// Lease is how long the run holds the erasure after beginning or
	// renewing it.
	Lease time.Duration
}

// NewErasureRunner returns a runner name for this process: host/pid/random.
func NewErasureRunner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), newID(""))
}

// ErasureBusyError is the answer to beginning an erasure that another run
// holds.
type ErasureBusyError struct {
	ID, Runner string
	Until      time.Time
}

func (e *ErasureBusyError) Error() string {
	return fmt.Sprintf("erasure %s is being run by %s (it holds it until %s unless it goes on): wait for it, or run the command again after that time if that process is gone",
		e.ID, e.Runner, e.Until.Format(time.RFC3339))
}

// ErrErasureLost means a run's hold on its erasure lapsed and another run
// took the erasure over: the first must stop.
var ErrErasureLost = errors.New("controlplane: another run took the erasure over")

// BeginUserErasure returns the user's running erasure, with resumed true,
// or records a new one at phase first, held by run until run.Lease from
// now. A running erasure another run holds is an *ErasureBusyError while
// that run's lease lasts, unless its runner is a process of this host that
// no longer exists (runnerGone). Concurrent callers agree on one.
func (s *Store) BeginUserErasure(ctx context.Context, userID, first, actor, reason string, run ErasureRun) (e UserErasure, resumed bool, err error) {
	err = s.tx(ctx, erasureLockKey(userID), func(tx *sql.Tx) error {
		now := s.now().UTC().Truncate(time.Microsecond)
		until := micros(now.Add(run.Lease))
		var runner string
		var held int64
		e, err = scanErasure(tx.QueryRowContext(ctx, `SELECT `+erasureCols+`, runner, lease_until FROM user_erasures WHERE user_id = $1 AND status = $2`, userID, ErasureRunning),
			&runner, &held)
		if err == nil {
			if runner != "" && runner != run.Runner && held > micros(now) && !runnerGone(runner) {
				return &ErasureBusyError{ID: e.ID, Runner: runner, Until: time.UnixMicro(held).UTC()}
			}
			resumed = true
			_, err = tx.ExecContext(ctx, `UPDATE user_erasures SET runner = $2, lease_until = $3 WHERE id = $1`, e.ID, run.Runner, until)
			return wrap("take erasure", err)
		}
		if !isNoRows(err) {
			return wrap("read erasure", err)
		}
		e = UserErasure{ID: newID("era_"), UserID: userID, Status: ErasureRunning, Phase: first, Counts: map[string]int{},
			Actor: actor, Reason: reason, StartedAt: now, UpdatedAt: now}
		_, err = tx.ExecContext(ctx, `INSERT INTO user_erasures (id, user_id, status, phase, counts, actor, reason, started_at, updated_at, runner, lease_until)
			VALUES ($1, $2, $3, $4, '{}', $5, $6, $7, $7, $8, $9)`, e.ID, userID, ErasureRunning, first, actor, reason, micros(now), run.Runner, until)
		return wrap("begin erasure", err)
	})
	return e, resumed, err
}

// RenewUserErasure extends run's hold on the running erasure id to
// run.Lease from now; ErrErasureLost when another run holds it now.
func (s *Store) RenewUserErasure(ctx context.Context, id string, run ErasureRun) error {
	res, err := s.db.ExecContext(ctx, `UPDATE user_erasures SET lease_until = $3 WHERE id = $1 AND runner = $2 AND status = $4`,
		id, run.Runner, micros(s.now().Add(run.Lease)), ErasureRunning)
	if err != nil {
		return wrap("renew erasure", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("erasure %s: %w", id, ErrErasureLost)
	}
	return nil
}

// runnerGone reports whether runner (host/pid/…) names a process of this
// host that no longer exists: a run that crashed, whose erasure a new run
// may take over at once rather than when its lease lapses.
func runnerGone(runner string) bool {
	host, rest, ok := strings.Cut(runner, "/")
	pidText, _, _ := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(pidText)
	if this, _ := os.Hostname(); !ok || err != nil || host != this || pid <= 0 {
		return false
	}
	return !processAlive(pid)
}

// erasureLockKey is the advisory lock that serialises beginning a user's
// erasure on PostgreSQL (SQLite serialises every write transaction).
func erasureLockKey(userID string) int64 { return userLockKey("cairn_user_erasure", userID) }

// ProgressUserErasure records that the running erasure id, which runner
// holds, has reached phase with counts; ErrErasureLost when it is not
// running or another run holds it.
func (s *Store) ProgressUserErasure(ctx context.Context, id, runner, phase string, counts map[string]int) error {
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE user_erasures SET phase = $2, counts = $3, updated_at = $4 WHERE id = $1 AND status = $5 AND runner = $6`,
		id, phase, string(b), micros(s.now()), ErasureRunning, runner)
	if err != nil {
		return wrap("erasure progress", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("controlplane: erasure %s is not running, or not by this run: %w", id, ErrErasureLost)
	}
	return nil
}

// ErasedUser reports whether the user with this id was erased (an
// erasure of it is done).
func (s *Store) ErasedUser(ctx context.Context, userID string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_erasures WHERE user_id = $1 AND status = $2`, userID, ErasureDone).Scan(&n)
	return n > 0, wrap("erased user", err)
}

// UserErasures returns the most recent erasures, newest first.
func (s *Store) UserErasures(ctx context.Context, limit int) ([]UserErasure, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+erasureCols+` FROM user_erasures ORDER BY started_at DESC, id LIMIT $1`, limit)
	if err != nil {
		return nil, wrap("erasures", err)
	}
	defer rows.Close()
	var out []UserErasure
	for rows.Next() {
		e, err := scanErasure(rows)
		if err != nil {
			return nil, wrap("erasures", err)
		}
		out = append(out, e)
	}
	return out, wrap("erasures", rows.Err())
}

// userRecordTables are the control-plane tables that hold a user's records,
// in the order the last step of an erasure deletes them (what refers to a
// row before the row), with the condition that selects the user's rows ($1
// is the user id). The audit log is not among them: it holds no content
// and stays the record of who did what (its retention ages it out), nor
// are the tombstones and user_erasures, which are what an erasure leaves.
var userRecordTables = []struct{ table, where string }{
	{"contradictions", "user_id = $1"},
	{"rejected_observations", "user_id = $1"},
	{"graph_retractions", "user_id = $1"},
	{"profile_changes", "user_id = $1"},
	{"profiles", "user_id = $1"},
	{"schema_recommendations", "user_id = $1"},
	{"schema_settings", "user_id = $1"},
	{"schema_versions", "owner_id = $1"},
	{"cairn_relationship_types", "user_id = $1"},
	{"cairn_jobs", "user_id = $1"},
	{"oauth_tokens", "client_id IN (SELECT id FROM oauth_clients WHERE user_id = $1)"},
	{"oauth_clients", "user_id = $1"},
	{"rate_limits", "key_id IN (SELECT id FROM api_keys WHERE user_id = $1)"},
	{"api_keys", "user_id = $1"},
	{"consent_rules", "user_id = $1"},
	{"agents", "user_id = $1"},
	{"users", "id = $1"},
}

// UserRecords counts the user's rows of each control-plane table the last
// step of an erasure deletes (what a dry run reports), by table.
func (s *Store) UserRecords(ctx context.Context, userID string) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range userRecordTables {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.table+` WHERE `+t.where, userID).Scan(&n); err != nil {
			return nil, wrap("count "+t.table, err)
		}
		if n > 0 {
			out[t.table] = n
		}
	}
	return out, nil
}

// RevokeUserAccess is an erasure's first step: no key or OAuth token of
// the user authenticates any more, and the user's queued interpretation
// jobs are cancelled and running ones asked to stop, so that nothing
// writes the user's data while it is erased. It returns how many keys and
// tokens went and how many jobs it cancelled.
func (s *Store) RevokeUserAccess(ctx context.Context, userID string) (map[string]int, error) {
	out := map[string]int{}
	now := micros(s.now())
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		clear(out)
		for _, st := range []struct {
			kind, sql string
			args      []any
		}{
			{"oauth_tokens", `DELETE FROM oauth_tokens WHERE client_id IN (SELECT id FROM oauth_clients WHERE user_id = $1)`, []any{userID}},
			{"rate_limits", `DELETE FROM rate_limits WHERE key_id IN (SELECT id FROM api_keys WHERE user_id = $1)`, []any{userID}},
			{"api_keys", `DELETE FROM api_keys WHERE user_id = $1`, []any{userID}},
			{"jobs_cancelled", `UPDATE cairn_jobs SET status = $3, stage = 'cancelled', cancel_requested = 1,
				finished_at = $2, updated_at = $2 WHERE user_id = $1 AND status = $4`, []any{userID, now, files.JobCancelled, files.JobQueued}},
			{"jobs_stopping", `UPDATE cairn_jobs SET cancel_requested = 1, updated_at = $2 WHERE user_id = $1 AND status = $3`,
				[]any{userID, now, files.JobRunning}},
		} {
			res, err := tx.ExecContext(ctx, st.sql, st.args...)
			if err != nil {
				return wrap("revoke "+st.kind, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return wrap("revoke "+st.kind, err)
			}
			if n > 0 {
				out[st.kind] = int(n)
			}
		}
		return nil
	})
	return out, err
}

// RunningJobs counts the user's jobs that run: a worker holds their lease
// (a job whose worker died, its lease run out, does not count).
func (s *Store) RunningJobs(ctx context.Context, userID string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM cairn_jobs WHERE user_id = $1 AND status = $3 AND lease_until > $2`,
		userID, micros(s.now()), files.JobRunning).Scan(&n)
	return n, wrap("running jobs", err)
}

// ErrUserHasFiles means an erasure's last step found files of the user
// still stored: their bytes must go first (files.Service.EraseFile).
var ErrUserHasFiles = errors.New("controlplane: the user still has stored files")

// FinishUserErasure is an erasure's last step: it deletes the user's
// records from every control-plane table (userRecordTables), the user
// record last, and marks the erasure done with counts plus what it
// deleted, in one transaction: a run that stops before it commits leaves
// the user to resume the erasure by name. It returns the erasure as done;
// ErrErasureLost when another run than runner holds it.
func (s *Store) FinishUserErasure(ctx context.Context, id, runner string, counts map[string]int) (UserErasure, error) {
	var out UserErasure
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		var holder string
		e, err := scanErasure(tx.QueryRowContext(ctx, `SELECT `+erasureCols+`, runner FROM user_erasures WHERE id = $1`, id), &holder)
		if isNoRows(err) {
			return fmt.Errorf("controlplane: erasure %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return wrap("finish erasure", err)
		}
		if e.Status != ErasureRunning {
			return fmt.Errorf("controlplane: erasure %s is %s", id, e.Status)
		}
		if holder != runner {
			return fmt.Errorf("erasure %s (held by %s): %w", id, holder, ErrErasureLost)
		}
		var files int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cairn_files WHERE user_id = $1`, e.UserID).Scan(&files); err != nil {
			return wrap("finish erasure", err)
		}
		if files > 0 {
			return fmt.Errorf("%w (%d)", ErrUserHasFiles, files)
		}
		total := make(map[string]int, len(counts)+len(userRecordTables))
		for k, v := range counts {
			total[k] = v
		}
		for _, t := range userRecordTables {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE `+t.where, e.UserID)
			if err != nil {
				return wrap("erase "+t.table, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return wrap("erase "+t.table, err)
			}
			if n > 0 {
				total[t.table] += int(n)
			}
		}
		b, err := json.Marshal(total)
		if err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		if _, err := tx.ExecContext(ctx, `UPDATE user_erasures SET status = $2, phase = '', counts = $3, updated_at = $4, finished_at = $4 WHERE id = $1`,
			id, ErasureDone, string(b), micros(now)); err != nil {
			return wrap("finish erasure", err)
		}
		e.Status, e.Phase, e.Counts, e.UpdatedAt, e.FinishedAt = ErasureDone, "", total, now, now
		out = e
		return nil
	})
	return out, err
}
