package controlplane

import (
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/migrations"
)

// MinAuditRetention is the shortest retention PurgeAudit accepts. A
// record's time is taken when its call ends and it commits within the
// audit log's write timeout, so a cutoff this far back is never crossed by
// a record still being written.
const MinAuditRetention = time.Hour

// AuditRetention says which audit records PurgeAudit deletes.
type AuditRetention struct {
	// Keep is how long records are kept: those older are deleted. It must
	// be at least MinAuditRetention.
	Keep time.Duration
	// ArchiveDir, when not empty, receives what a run deletes before it is
	// deleted: one gzip-compressed JSON Lines file per run, written and
	// synced to disk before the first record goes.
	ArchiveDir string
	// Batch is how many records one delete transaction removes, so that
	// writers wait for at most one small transaction; 0 means 1000.
	Batch int
	// MaxPerRun bounds the records one run archives and deletes (and so
	// one archive file); RunAuditRetention runs again at once while a run
	// reaches it. 0 means 100,000.
	MaxPerRun int
}

// AuditPurge is what one PurgeAudit run did.
type AuditPurge struct {
	// Deleted is how many records were deleted.
	Deleted int
	// Archive is the archive file written, empty when none was.
	Archive string
	// Skipped is true when another process was purging the same database
	// (PostgreSQL), and this run did nothing.
	Skipped bool
}

// ArchivedAuditRecord is one line of an archive file: every field of a
// record, as the audit log held it.
type ArchivedAuditRecord struct {
	ID         int64  `json:"id"`
	At         string `json:"at"` // RFC 3339, microseconds, UTC
	UserID     string `json:"user_id"`
	AgentID    string `json:"agent_id"`
	AgentName  string `json:"agent_name"`
	KeyID      string `json:"key_id"`
	Transport  string `json:"transport"`
	Tool       string `json:"tool"`
	Kind       string `json:"kind"`
	Action     string `json:"action"`
	Resource   string `json:"resource"`
	Decision   string `json:"decision"`
	ResultCode string `json:"result_code"`
	LatencyUS  int64  `json:"latency_us"`
	RequestID  string `json:"request_id"`
	// Count is how many decisions the record stands for (consent.AuditRecord.Count).
	Count int `json:"count"`
}

// purgeLockKey is the PostgreSQL advisory lock that keeps two processes
// from purging, and archiving, the same records at once ("cairnaud").
const purgeLockKey int64 = 0x636169726e617564

// PurgeAudit deletes the audit records older than r.Keep, of every user,
// archiving them first when r.ArchiveDir is set: a record is deleted only
// once the archive file holding it is complete and synced to disk. It is
// the one path the audit log's triggers let delete (see
// 010_compact_audit.sql); it deletes in transactions of r.Batch records,
// oldest first.
func (s *Store) PurgeAudit(ctx context.Context, r AuditRetention) (AuditPurge, error) {
	if r.Keep < MinAuditRetention {
		return AuditPurge{}, fmt.Errorf("controlplane: purge audit: retention %v is shorter than %v", r.Keep, MinAuditRetention)
	}
	if r.Batch <= 0 {
		r.Batch = 1000
	}
	if r.MaxPerRun <= 0 {
		r.MaxPerRun = 100_000
	}
	if s.dialect == migrations.Postgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return AuditPurge{}, wrap("purge audit", err)
		}
		defer conn.Close()
		var locked bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, purgeLockKey).Scan(&locked); err != nil {
			return AuditPurge{}, wrap("purge audit", err)
		}
		if !locked {
			return AuditPurge{Skipped: true}, nil
		}
		defer func() {
			unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = conn.ExecContext(unlockCtx, `SELECT pg_advisory_unlock($1)`, purgeLockKey)
		}()
	}
	cutoff := micros(s.now().Add(-r.Keep))
	var out AuditPurge
	if r.ArchiveDir == "" {
		for out.Deleted < r.MaxPerRun {
			n, err := s.deleteAudit(ctx, cutoff, `SELECT id FROM audit_log WHERE at < $1 ORDER BY id LIMIT $2`, []any{min(r.Batch, r.MaxPerRun-out.Deleted)})
			out.Deleted += n
			if err != nil || n == 0 {
				return out, err
			}
		}
		return out, nil
	}
	path, ids, err := s.archiveAudit(ctx, r, cutoff)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	out.Archive = path
	for start := 0; start < len(ids); start += r.Batch {
		part := ids[start:min(len(ids), start+r.Batch)]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		n, err := s.deleteAudit(ctx, cutoff, `SELECT id FROM audit_log WHERE id IN (`+params(2, len(part))+`)`, args)
		out.Deleted += n
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// deleteAudit deletes, in one transaction, the records that selectIDs
// (whose $1 is the cutoff, and args the rest of its parameters) selects and
// that are older than cutoff; it tells the triggers so first.
func (s *Store) deleteAudit(ctx context.Context, cutoff int64, selectIDs string, args []any) (int, error) {
	var n int64
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		allow, forbid := `INSERT INTO audit_purge (id, before) VALUES (1, $1)`, `DELETE FROM audit_purge`
		if s.dialect == migrations.Postgres {
			allow, forbid = `SELECT set_config('cairn.audit_purge_before', $1::text, true)`, `SELECT set_config('cairn.audit_purge_before', '', true)`
		}
		if _, err := tx.ExecContext(ctx, allow, strconv.FormatInt(cutoff, 10)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE at < $1 AND id IN (`+selectIDs+`)`, append([]any{cutoff}, args...)...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, forbid)
		return err
	})
	return int(n), wrap("purge audit", err)
}

// archiveAudit writes the records older than cutoff, oldest first and at
// most r.MaxPerRun of them, to a new archive file, and returns its path and
// the ids it holds. The file is complete and synced, its name and all, when
// archiveAudit returns; on an error no file is left and no id returned.
func (s *Store) archiveAudit(ctx context.Context, r AuditRetention, cutoff int64) (path string, ids []int64, err error) {
	if err := os.MkdirAll(r.ArchiveDir, 0o700); err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	tmp, err := os.CreateTemp(r.ArchiveDir, ".audit-*.jsonl.gz.tmp")
	if err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			ids = nil
		}
	}()
	zw := gzip.NewWriter(tmp)
	enc := json.NewEncoder(zw)
	for after := int64(0); len(ids) < r.MaxPerRun; {
		recs, err := s.scanAudit(ctx, `at < $1 AND id > $2 ORDER BY id LIMIT $3`, []any{cutoff, after, min(r.Batch, r.MaxPerRun-len(ids))})
		if err != nil {
			return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
		}
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			if err := enc.Encode(archived(rec)); err != nil {
				return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
			}
			ids = append(ids, rec.ID)
		}
		after = recs[len(recs)-1].ID
	}
	if len(ids) == 0 {
		tmp.Close()
		return "", nil, os.Remove(tmp.Name())
	}
	if err := zw.Close(); err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	path = filepath.Join(r.ArchiveDir, fmt.Sprintf("audit-%s-%d-%d.jsonl.gz", s.now().UTC().Format("20060102T150405Z"), ids[0], ids[len(ids)-1]))
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	if err := syncDir(r.ArchiveDir); err != nil {
		os.Remove(path)
		return "", nil, fmt.Errorf("controlplane: audit archive: %w", err)
	}
	return path, ids, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func archived(r consent.AuditRecord) ArchivedAuditRecord {
	return ArchivedAuditRecord{ID: r.ID, At: r.At.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), UserID: r.UserID, AgentID: r.AgentID,
		AgentName: r.AgentName, KeyID: r.KeyID, Transport: r.Transport, Tool: r.Tool, Kind: r.Kind, Action: string(r.Action),
		Resource: r.Resource, Decision: string(r.Decision), ResultCode: r.ResultCode, LatencyUS: r.Latency.Microseconds(), RequestID: r.RequestID,
		Count: max(r.Count, 1)}
}

// RunAuditRetention runs PurgeAudit every interval (0: hourly), first at
// once, until ctx ends; a run that reached r.MaxPerRun is followed by
// another at once. Failures are logged and retried at the next interval.
func (s *Store) RunAuditRetention(ctx context.Context, r AuditRetention, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = time.Hour
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxPerRun := r.MaxPerRun
	if maxPerRun <= 0 {
		maxPerRun = 100_000
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next := interval
		res, err := s.PurgeAudit(ctx, r)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("audit retention", "deleted", res.Deleted, "archive", res.Archive, "err", err)
		case res.Deleted > 0:
			log.Info("audit retention", "deleted", res.Deleted, "archive", res.Archive)
			if res.Deleted >= maxPerRun {
				next = 0
			}
		}
		timer.Reset(next)
	}
}
