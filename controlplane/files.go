package controlplane

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/cairnkg/cairn/knowledge/files"
)

// The Store keeps file metadata and jobs for the files service.
var (
	_ files.Meta     = (*Store)(nil)
	_ files.JobStore = (*Store)(nil)
)

// fileInsertCols are the columns a new file row is written with; its types
// start empty. fileCols are those a row is read with.
const (
	fileInsertCols = `user_id, id, content_hash, blob_key, size, mime_type, filename, state, agent_id, created_at`
	fileCols       = fileInsertCols + `, types`
)

func scanFile(row interface{ Scan(...any) error }) (files.File, error) {
	var f files.File
	var created int64
	var types string
	err := row.Scan(&f.UserID, &f.ID, &f.ContentHash, &f.BlobKey, &f.Size, &f.MimeType, &f.Filename, &f.State, &f.AgentID, &created, &types)
	if err != nil {
		return f, err
	}
	f.CreatedAt = time.UnixMicro(created).UTC()
	if err := json.Unmarshal([]byte(types), &f.Types); err != nil {
		return f, fmt.Errorf("controlplane: file %s: types: %w", f.ID, err)
	}
	return f, nil
}

// BeginFile inserts a pending file row unless the user has one with its id.
func (s *Store) BeginFile(ctx context.Context, f files.File) (files.File, bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO cairn_files (`+fileInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (user_id, id) DO NOTHING`,
		f.UserID, f.ID, f.ContentHash, f.BlobKey, f.Size, f.MimeType, f.Filename, files.StatePending, f.AgentID, micros(f.CreatedAt))
	if err != nil {
		return files.File{}, false, wrap("begin file", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return files.File{}, false, nil
	}
	prev, err := s.File(ctx, f.UserID, f.ID)
	return prev, err == nil, err
}

// BeginFileWithinQuota is BeginFile under a bound on the total size of the
// user's files, pending ones included: the sum of their sizes stays the
// truth, and the check and the insert run in one transaction that no other
// upload of the user's can interleave with. On SQLite every transaction
// takes the write lock at BEGIN (BEGIN IMMEDIATE), so uploads serialise
// there; on PostgreSQL the transaction first takes an advisory lock named
// after the user (pg_advisory_xact_lock), held until commit, and the sum,
// read after the lock under READ COMMITTED, sees every row a previous
// holder committed. A row the user already has (the same bytes) adds
// nothing and is returned with exists set, unchecked. Over the quota the
// error is a *files.QuotaError and nothing is inserted.
func (s *Store) BeginFileWithinQuota(ctx context.Context, f files.File, quota int64) (files.File, bool, error) {
	var (
		prev   files.File
		exists bool
	)
	err := s.tx(ctx, fileQuotaLockKey(f.UserID), func(tx *sql.Tx) error {
		var err error
		prev, err = scanFile(tx.QueryRowContext(ctx, `SELECT `+fileCols+` FROM cairn_files WHERE user_id = $1 AND id = $2`, f.UserID, f.ID))
		if err == nil {
			exists = true
			return nil
		}
		if !isNoRows(err) {
			return wrap("begin file", err)
		}
		var used sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT SUM(size) FROM cairn_files WHERE user_id = $1`, f.UserID).Scan(&used); err != nil {
			return wrap("begin file: used bytes", err)
		}
		if used.Int64+f.Size > quota {
			return &files.QuotaError{Used: used.Int64, Quota: quota, Size: f.Size}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO cairn_files (`+fileInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			f.UserID, f.ID, f.ContentHash, f.BlobKey, f.Size, f.MimeType, f.Filename, files.StatePending, f.AgentID, micros(f.CreatedAt))
		return wrap("begin file", err)
	})
	if err != nil {
		return files.File{}, false, err
	}
	return prev, exists, nil
}

// AddFileTypes adds types to those of a file's row (a set: sorted, without
// repeats, never shrunk). Concurrent adders both land: the row is
// compared-and-swapped until it holds every type either added.
func (s *Store) AddFileTypes(ctx context.Context, userID, id string, types []string) error {
	for {
		f, err := s.File(ctx, userID, id)
		if err != nil {
			return err
		}
		merged := slices.Concat(f.Types, types)
		slices.Sort(merged)
		merged = slices.Compact(merged)
		if slices.Equal(merged, f.Types) {
			return nil
		}
		old, _ := json.Marshal(orEmptyStrings(f.Types))
		next, _ := json.Marshal(merged)
		res, err := s.db.ExecContext(ctx, `UPDATE cairn_files SET types = $4 WHERE user_id = $1 AND id = $2 AND types = $3`,
			userID, id, string(old), string(next))
		if err != nil {
			return wrap("add file types", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// orEmptyStrings is s, or an empty slice for nil (which JSON writes as
// null).
func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fileQuotaLockKey is the PostgreSQL advisory lock that serialises one
// user's uploads while their quota is checked (BeginFileWithinQuota).
func fileQuotaLockKey(userID string) int64 { return userLockKey("cairn_files_quota", userID) }

// userLockKey is a PostgreSQL advisory lock of one user for one purpose.
// Two users whose keys collide only wait on each other.
func userLockKey(purpose, userID string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(purpose + "\x00" + userID))
	return int64(h.Sum64() | 1) // never 0, which tx reads as no lock
}

// FinishFile marks a file stored. A row that is gone (an upload of the
// same bytes failed and released it) wraps files.ErrFileNotFound.
func (s *Store) FinishFile(ctx context.Context, userID, id string) error {
	r, err := s.db.ExecContext(ctx, `UPDATE cairn_files SET state = $3 WHERE user_id = $1 AND id = $2`, userID, id, files.StateStored)
	if err != nil {
		return wrap("finish file", err)
	}
	if n, err := r.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("controlplane: finish file %s: %w", id, files.ErrFileNotFound)
	}
	return nil
}

// DeleteFile removes a file row.
func (s *Store) DeleteFile(ctx context.Context, userID, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM cairn_files WHERE user_id = $1 AND id = $2`, userID, id)
	return wrap("delete file", err)
}

// File returns a user's file row.
func (s *Store) File(ctx context.Context, userID, id string) (files.File, error) {
	f, err := scanFile(s.db.QueryRowContext(ctx, `SELECT `+fileCols+` FROM cairn_files WHERE user_id = $1 AND id = $2`, userID, id))
	if isNoRows(err) {
		return files.File{}, fmt.Errorf("controlplane: file %s: %w", id, files.ErrFileNotFound)
	}
	return f, wrap("read file", err)
}

// PendingFiles returns pending rows created before a time, oldest first.
func (s *Store) PendingFiles(ctx context.Context, before time.Time) ([]files.File, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+fileCols+` FROM cairn_files WHERE state = $1 AND created_at < $2 ORDER BY created_at`,
		files.StatePending, micros(before))
	if err != nil {
		return nil, wrap("pending files", err)
	}
	defer rows.Close()
	var out []files.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, wrap("pending files", err)
		}
		out = append(out, f)
	}
	return out, wrap("pending files", rows.Err())
}

// StoredFiles returns a user's stored files (pending ones left out), by
// id: what cairn export writes.
func (s *Store) StoredFiles(ctx context.Context, userID string) ([]files.File, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+fileCols+` FROM cairn_files WHERE user_id = $1 AND state = $2 ORDER BY id`,
		userID, files.StateStored)
	if err != nil {
		return nil, wrap("stored files", err)
	}
	defer rows.Close()
	var out []files.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, wrap("stored files", err)
		}
		out = append(out, f)
	}
	return out, wrap("stored files", rows.Err())
}

// FileIDs returns the ids of all of a user's files, pending ones
// included, by id: what erasing the user must remove.
func (s *Store) FileIDs(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM cairn_files WHERE user_id = $1 ORDER BY id`, userID)
	if err != nil {
		return nil, wrap("file ids", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, wrap("file ids", err)
		}
		out = append(out, id)
	}
	return out, wrap("file ids", rows.Err())
}

// UsedBytes is the total size of a user's files, pending ones included.
func (s *Store) UsedBytes(ctx context.Context, userID string) (int64, error) {
	var n sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT SUM(size) FROM cairn_files WHERE user_id = $1`, userID).Scan(&n)
	return n.Int64, wrap("used bytes", err)
}

// SigningSecret returns the URL signing secret, creating it on first use.
// Concurrent first uses agree: the insert that loses the race reads the
// winner's.
func (s *Store) SigningSecret(ctx context.Context) ([]byte, error) {
	var secret string
	err := s.db.QueryRowContext(ctx, `SELECT secret FROM cairn_signing_keys WHERE id = 'files'`).Scan(&secret)
	if err == nil {
		return hex.DecodeString(secret)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, wrap("signing key", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, wrap("signing key", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO cairn_signing_keys (id, secret, created_at) VALUES ('files', $1, $2)
		ON CONFLICT (id) DO NOTHING`, hex.EncodeToString(b), micros(s.now())); err != nil {
		return nil, wrap("signing key", err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT secret FROM cairn_signing_keys WHERE id = 'files'`).Scan(&secret); err != nil {
		return nil, wrap("signing key", err)
	}
	return hex.DecodeString(secret)
}
