package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/migrations"
)

const jobCols = `id, user_id, agent_id, agent_name, kind, file_id, status, stage, percent, items_done, items_total,
	attempts, max_attempts, run_after, lease_owner, lease_until, cancel_requested, config, result, error_code, error_message,
	created_at, started_at, finished_at, updated_at, key_id`

func scanJob(row interface{ Scan(...any) error }) (files.Job, error) {
	var (
		j                                  files.Job
		runAfter, leaseUntil, created, upd int64
		started, finished                  sql.NullInt64
		cancel                             int
		config, result                     string
	)
	err := row.Scan(&j.ID, &j.UserID, &j.AgentID, &j.AgentName, &j.Kind, &j.FileID, &j.Status, &j.Progress.Stage, &j.Progress.Percent,
		&j.Progress.ItemsDone, &j.Progress.ItemsTotal, &j.Attempts, &j.MaxAttempts, &runAfter, &j.LeaseOwner, &leaseUntil, &cancel,
		&config, &result, &j.ErrorCode, &j.ErrorMessage, &created, &started, &finished, &upd, &j.KeyID)
	if err != nil {
		return j, err
	}
	j.RunAfter, j.LeaseUntil = time.UnixMicro(runAfter).UTC(), time.UnixMicro(leaseUntil).UTC()
	j.CreatedAt, j.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(upd).UTC()
	j.StartedAt, j.FinishedAt = fromMicros(started), fromMicros(finished)
	j.CancelRequested = cancel != 0
	if err := json.Unmarshal([]byte(config), &j.Config); err != nil {
		return j, fmt.Errorf("job config: %w", err)
	}
	if err := json.Unmarshal([]byte(result), &j.Result); err != nil {
		return j, fmt.Errorf("job result: %w", err)
	}
	return j, nil
}

func jsonText(v map[string]any) (string, error) {
	if v == nil {
		return "{}", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// EnqueueJob inserts a queued job.
func (s *Store) EnqueueJob(ctx context.Context, j files.Job) error {
	config, err := jsonText(j.Config)
	if err != nil {
		return wrap("enqueue job", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO cairn_jobs (id, user_id, agent_id, agent_name, kind, file_id, status, stage,
		max_attempts, run_after, config, created_at, updated_at, key_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)`,
		j.ID, j.UserID, j.AgentID, j.AgentName, j.Kind, j.FileID, files.JobQueued, j.Progress.Stage, j.MaxAttempts,
		micros(j.RunAfter), config, micros(j.CreatedAt), j.KeyID)
	return wrap("enqueue job", err)
}

// Job returns a user's job.
func (s *Store) Job(ctx context.Context, userID, id string) (files.Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+` FROM cairn_jobs WHERE user_id = $1 AND id = $2`, userID, id))
	if isNoRows(err) {
		return files.Job{}, fmt.Errorf("controlplane: job %s: %w", id, files.ErrJobNotFound)
	}
	return j, wrap("read job", err)
}

// ListJobs returns a user's jobs, newest first.
func (s *Store) ListJobs(ctx context.Context, userID string, q files.JobQuery) ([]files.Job, error) {
	where := []string{"user_id = $1"}
	args := []any{userID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Status != "" {
		add("status = $%d", q.Status)
	}
	if q.FileID != "" {
		add("file_id = $%d", q.FileID)
	}
	if !q.Before.IsZero() {
		add("created_at < $%d", micros(q.Before))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobCols+` FROM cairn_jobs WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit), args...)
	if err != nil {
		return nil, wrap("list jobs", err)
	}
	defer rows.Close()
	var out []files.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, wrap("list jobs", err)
		}
		out = append(out, j)
	}
	return out, wrap("list jobs", rows.Err())
}

// LeaseJob hands a runnable job to owner: the oldest of the user with the
// fewest jobs running. On PostgreSQL the
// candidate row is locked with FOR UPDATE SKIP LOCKED, so concurrent
// workers each take a different job without waiting on each other; on
// SQLite the statement runs under the database's write lock.
func (s *Store) LeaseJob(ctx context.Context, owner string, now, leaseUntil time.Time) (files.Job, bool, error) {
	var (
		j  files.Job
		ok bool
	)
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		// Jobs whose worker died with no attempts left fail, rather than
		// run again.
		if _, err := tx.ExecContext(ctx, `UPDATE cairn_jobs SET status = $1, error_code = 'PROCESSING_FAILED',
			error_message = 'the worker running the job stopped, and no attempts are left', finished_at = $2, updated_at = $2,
			lease_owner = '' WHERE status = $3 AND lease_until < $2 AND attempts >= max_attempts`,
			files.JobFailed, micros(now), files.JobRunning); err != nil {
			return err
		}
		lock := ""
		if s.dialect == migrations.Postgres {
			lock = " FOR UPDATE OF j SKIP LOCKED"
		}
		// Users take turns: the job goes to the user with the fewest
		// jobs running (under a live lease), then the oldest runnable. A
		// user with a thousand jobs queued delays another's by at most
		// the job each worker is running when it was queued.
		row := tx.QueryRowContext(ctx, `UPDATE cairn_jobs SET status = $1, lease_owner = $2, lease_until = $3,
			attempts = attempts + 1, started_at = COALESCE(started_at, $4), updated_at = $4
			WHERE id = (WITH busy AS (SELECT user_id, count(*) AS n FROM cairn_jobs WHERE status = $1 AND lease_until >= $4 GROUP BY user_id)
				SELECT j.id FROM cairn_jobs j LEFT JOIN busy ON busy.user_id = j.user_id
				WHERE (j.status = $5 AND j.run_after <= $4) OR (j.status = $1 AND j.lease_until < $4)
				ORDER BY COALESCE(busy.n, 0), j.run_after, j.created_at, j.id LIMIT 1`+lock+`)
			RETURNING `+jobCols, files.JobRunning, owner, micros(leaseUntil), micros(now), files.JobQueued)
		var err error
		j, err = scanJob(row)
		if isNoRows(err) {
			return nil
		}
		ok = err == nil
		return err
	})
	if err != nil {
		return files.Job{}, false, wrap("lease job", err)
	}
	return j, ok, nil
}

// ProgressJob records progress and extends the lease.
func (s *Store) ProgressJob(ctx context.Context, id, owner string, p files.Progress, now, leaseUntil time.Time) (bool, error) {
	var cancel int
	err := s.db.QueryRowContext(ctx, `UPDATE cairn_jobs SET stage = $3, percent = $4, items_done = $5, items_total = $6,
		lease_until = $7, updated_at = $8 WHERE id = $1 AND lease_owner = $2 AND status = $9 RETURNING cancel_requested`,
		id, owner, p.Stage, p.Percent, p.ItemsDone, p.ItemsTotal, micros(leaseUntil), micros(now), files.JobRunning).Scan(&cancel)
	if isNoRows(err) {
		return false, fmt.Errorf("controlplane: job %s: %w", id, files.ErrLeaseLost)
	}
	if err != nil {
		return false, wrap("job progress", err)
	}
	return cancel != 0, nil
}

// FinishJob sets a final status, if owner still holds the job.
func (s *Store) FinishJob(ctx context.Context, id, owner, status string, result map[string]any, code, message string, now time.Time) error {
	res, err := jsonText(result)
	if err != nil {
		return wrap("finish job", err)
	}
	r, err := s.db.ExecContext(ctx, `UPDATE cairn_jobs SET status = $3, result = $4, error_code = $5, error_message = $6,
		finished_at = $7, updated_at = $7, lease_owner = '', lease_until = 0 WHERE id = $1 AND lease_owner = $2 AND status = $8`,
		id, owner, status, res, code, message, micros(now), files.JobRunning)
	if err != nil {
		return wrap("finish job", err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("controlplane: job %s: %w", id, files.ErrLeaseLost)
	}
	return nil
}

// RetryJob puts a running job back in the queue, keeping the attempt's
// result.
func (s *Store) RetryJob(ctx context.Context, id, owner string, runAfter time.Time, result map[string]any, code, message string, now time.Time) error {
	res, err := jsonText(result)
	if err != nil {
		return wrap("retry job", err)
	}
	r, err := s.db.ExecContext(ctx, `UPDATE cairn_jobs SET status = $3, run_after = $4, error_code = $5, error_message = $6,
		stage = 'retrying', updated_at = $7, lease_owner = '', lease_until = 0, result = $9 WHERE id = $1 AND lease_owner = $2 AND status = $8`,
		id, owner, files.JobQueued, micros(runAfter), code, message, micros(now), files.JobRunning, res)
	if err != nil {
		return wrap("retry job", err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("controlplane: job %s: %w", id, files.ErrLeaseLost)
	}
	return nil
}

// CancelJob cancels a queued job, or asks a running one to stop.
func (s *Store) CancelJob(ctx context.Context, userID, id string, now time.Time) (files.Job, error) {
	var out files.Job
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		j, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM cairn_jobs WHERE user_id = $1 AND id = $2`+s.forUpdate(), userID, id))
		if isNoRows(err) {
			return fmt.Errorf("controlplane: job %s: %w", id, files.ErrJobNotFound)
		}
		if err != nil {
			return wrap("cancel job", err)
		}
		switch {
		case j.Finished():
			return fmt.Errorf("controlplane: job %s is %s: %w", id, j.Status, files.ErrJobFinished)
		case j.Status == files.JobQueued:
			_, err = tx.ExecContext(ctx, `UPDATE cairn_jobs SET status = $2, stage = 'cancelled', cancel_requested = 1,
				finished_at = $3, updated_at = $3 WHERE id = $1`, id, files.JobCancelled, micros(now))
		default:
			_, err = tx.ExecContext(ctx, `UPDATE cairn_jobs SET cancel_requested = 1, updated_at = $2 WHERE id = $1`, id, micros(now))
		}
		if err != nil {
			return wrap("cancel job", err)
		}
		out, err = scanJob(tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM cairn_jobs WHERE id = $1`, id))
		return wrap("cancel job", err)
	})
	return out, err
}

func (s *Store) forUpdate() string {
	if s.dialect == migrations.Postgres {
		return " FOR UPDATE"
	}
	return ""
}
