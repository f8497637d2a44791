package controlplane_test

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/migrations"
)

// appendAt writes n records of user, at times from start a second apart.
func appendAt(t *testing.T, s *controlplane.Store, user string, start time.Time, n int) {
	t.Helper()
	recs := make([]consent.AuditRecord, n)
	for i := range recs {
		recs[i] = consent.AuditRecord{At: start.Add(time.Duration(i) * time.Second).UTC().Truncate(time.Microsecond), UserID: user, AgentID: "agt_1",
			AgentName: "claude", KeyID: "key_1", Transport: "http", Tool: "store", Kind: consent.AuditCall, Decision: consent.Allow,
			ResultCode: "OK", Latency: time.Duration(i) * time.Millisecond, RequestID: fmt.Sprintf("trace_%016x", i+1)}
	}
	if err := s.AppendAudit(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
}

// readArchive returns the records of an archive file.
func readArchive(t *testing.T, path string) []controlplane.ArchivedAuditRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []controlplane.ArchivedAuditRecord
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var r controlplane.ArchivedAuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPurgeAudit deletes records past retention, archiving them first:
// the archive holds exactly what was deleted, every field of it, and the
// rest of the log is untouched.
func TestPurgeAudit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		now := time.Now()
		appendAt(t, s, "u1", now.Add(-72*time.Hour), 15)
		appendAt(t, s, "u2", now.Add(-50*time.Hour), 5)
		appendAt(t, s, "u1", now.Add(-time.Hour), 10)
		before := map[string][]consent.AuditRecord{}
		for _, u := range []string{"u1", "u2"} {
			recs, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: u, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			before[u] = recs
		}

		dir := filepath.Join(t.TempDir(), "archive")
		res, err := s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour, ArchiveDir: dir, Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted != 20 || res.Archive == "" {
			t.Fatalf("PurgeAudit = %+v, want 20 deleted and an archive", res)
		}
		var want []controlplane.ArchivedAuditRecord
		for _, r := range append(before["u1"][10:], before["u2"]...) {
			want = append(want, controlplane.ArchivedAuditRecord{ID: r.ID, At: r.At.Format("2006-01-02T15:04:05.000000Z07:00"),
				UserID: r.UserID, AgentID: r.AgentID, AgentName: r.AgentName, KeyID: r.KeyID, Transport: r.Transport, Tool: r.Tool,
				Kind: r.Kind, Action: string(r.Action), Resource: r.Resource, Decision: string(r.Decision), ResultCode: r.ResultCode,
				LatencyUS: r.Latency.Microseconds(), RequestID: r.RequestID, Count: r.Count})
		}
		got := readArchive(t, res.Archive)
		if diff := gocmp.Diff(sortedByID(want), got); diff != "" {
			t.Errorf("archive (-want +got):\n%s", diff)
		}
		left, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(before["u1"][:10], left); diff != "" {
			t.Errorf("records kept (-want +got):\n%s", diff)
		}
		if left, _ := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u2"}); len(left) != 0 {
			t.Errorf("u2 kept %d records past retention", len(left))
		}

		// Nothing left to purge: no file, nothing deleted.
		res, err = s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour, ArchiveDir: dir})
		if err != nil || res.Deleted != 0 || res.Archive != "" {
			t.Errorf("second run = %+v, %v", res, err)
		}
		if files, _ := os.ReadDir(dir); len(files) != 1 {
			t.Errorf("archive directory holds %d files, want 1", len(files))
		}

		// Without an archive, in batches bounded per run.
		appendAt(t, s, "u1", now.Add(-30*time.Hour), 9)
		res, err = s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour, Batch: 2, MaxPerRun: 5})
		if err != nil || res.Deleted != 5 || res.Archive != "" {
			t.Errorf("bounded run = %+v, %v; want 5 deleted", res, err)
		}
		res, err = s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour, Batch: 2})
		if err != nil || res.Deleted != 4 {
			t.Errorf("next run = %+v, %v; want 4 deleted", res, err)
		}
		if left, _ := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1", Limit: 1000}); len(left) != 10 {
			t.Errorf("%d records left, want 10", len(left))
		}

		if _, err := s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: time.Minute}); err == nil {
			t.Error("a retention shorter than an hour was accepted")
		}
	})
}

func sortedByID(rs []controlplane.ArchivedAuditRecord) []controlplane.ArchivedAuditRecord {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b controlplane.ArchivedAuditRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// TestPurgeAuditArchiveFails deletes nothing when the archive cannot be
// written.
func TestPurgeAuditArchiveFails(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		appendAt(t, s, "u1", time.Now().Add(-72*time.Hour), 3)
		notDir := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(notDir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if res, err := s.PurgeAudit(t.Context(), controlplane.AuditRetention{Keep: time.Hour, ArchiveDir: notDir}); err == nil {
			t.Errorf("PurgeAudit into a file = %+v, want an error", res)
		}
		if left, _ := s.QueryAudit(t.Context(), consent.AuditQuery{UserID: "u1"}); len(left) != 3 {
			t.Errorf("%d records left after a failed archive, want 3", len(left))
		}
	})
}

// TestAuditLogDeletePath checks that the triggers allow retention's delete
// and nothing else: no UPDATE ever, no DELETE outside it, and within it
// only records older than its cutoff.
func TestAuditLogDeletePath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		now := time.Now()
		appendAt(t, s, "u1", now.Add(-72*time.Hour), 2)
		appendAt(t, s, "u1", now.Add(-time.Minute), 2)
		db := s.DB()
		for _, stmt := range []string{`DELETE FROM audit_log`, `UPDATE audit_log SET latency_us = 0`, `DELETE FROM audit_strings`,
			`UPDATE audit_strings SET value = 'x'`, `DELETE FROM audit_callers`, `UPDATE audit_callers SET agent_name = 'x'`} {
			if _, err := db.ExecContext(ctx, stmt); err == nil {
				t.Errorf("%s succeeded", stmt)
			}
		}
		if s.Dialect() == migrations.Postgres {
			if _, err := db.ExecContext(ctx, `TRUNCATE audit_log`); err == nil {
				t.Error("TRUNCATE audit_log succeeded")
			}
		}
		cutoff := strconv.FormatInt(now.Add(-24*time.Hour).UnixMicro(), 10)
		allow := `INSERT INTO audit_purge (id, before) VALUES (1, ` + cutoff + `)`
		if s.Dialect() == migrations.Postgres {
			allow = `SELECT set_config('cairn.audit_purge_before', '` + cutoff + `', true)`
		}
		// Within the purge path, a recent record and any update are
		// still refused.
		for _, stmt := range []string{`DELETE FROM audit_log`, `UPDATE audit_log SET latency_us = 0 WHERE at < ` + cutoff} {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, allow); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, stmt); err == nil {
				t.Errorf("%s within the purge path succeeded", stmt)
			}
			_ = tx.Rollback()
		}
		if left, _ := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1"}); len(left) != 4 {
			t.Errorf("%d records left, want 4", len(left))
		}
		if res, err := s.PurgeAudit(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour}); err != nil || res.Deleted != 2 {
			t.Errorf("PurgeAudit = %+v, %v; want 2 deleted", res, err)
		}
		// The purge path closes with its transaction.
		if _, err := db.ExecContext(ctx, `DELETE FROM audit_log`); err == nil {
			t.Error("DELETE after a purge succeeded")
		}
	})
}

// TestRunAuditRetention purges at once when started, and stops with its
// context.
func TestRunAuditRetention(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		appendAt(t, s, "u1", time.Now().Add(-72*time.Hour), 3)
		appendAt(t, s, "u1", time.Now(), 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.RunAuditRetention(ctx, controlplane.AuditRetention{Keep: 24 * time.Hour}, time.Hour, nil)
		}()
		deadline := time.Now().Add(10 * time.Second)
		for {
			left, err := s.QueryAudit(t.Context(), consent.AuditQuery{UserID: "u1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d records left after 10 s, want 1", len(left))
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
	})
}
