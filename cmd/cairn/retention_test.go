package main

import (
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
)

func TestRetentionFlags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     retentionFlags
		keep      time.Duration
		archive   string
		wantUsage bool
	}{
		{name: "default keeps forever", flags: retentionFlags{retention: "0"}},
		{name: "days", flags: retentionFlags{retention: "90d"}, keep: 90 * 24 * time.Hour},
		{name: "hours with an archive", flags: retentionFlags{retention: "720h", archive: "/var/archive"}, keep: 720 * time.Hour, archive: "/var/archive"},
		{name: "shorter than an hour", flags: retentionFlags{retention: "30m"}, wantUsage: true},
		{name: "negative", flags: retentionFlags{retention: "-1h"}, wantUsage: true},
		{name: "not a duration", flags: retentionFlags{retention: "soon"}, wantUsage: true},
		{name: "archive without retention", flags: retentionFlags{retention: "0", archive: "/var/archive"}, wantUsage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg appConfig
			err := tc.flags.apply(&cfg)
			var usage usageError
			if tc.wantUsage {
				if !errors.As(err, &usage) {
					t.Fatalf("apply = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.auditRetention.Keep != tc.keep || cfg.auditRetention.ArchiveDir != tc.archive {
				t.Errorf("retention = %+v, want keep %v, archive %q", cfg.auditRetention, tc.keep, tc.archive)
			}
		})
	}
}

// A server nobody subscribes to still prunes the graph's change log: a
// change logged two hours ago is gone soon after serve starts, with no MCP
// session open, and a recent one stays.
func TestServePrunesTheChangeLog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	_, kill := startServeProcess(t, dataDir) // creates the store
	kill()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		entity string
		age    time.Duration
	}{{"ent_old", 2 * time.Hour}, {"ent_new", time.Minute}} {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO graph_changes (user_id, entity_id, entity_type, kind, related_id, period, changed_at)
			VALUES ('u', $1, 'person', 'entity', '', '', $2)`, c.entity, time.Now().Add(-c.age).UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	startServe(t, dataDir)
	left := func() []string {
		rows, err := db.QueryContext(t.Context(), `SELECT entity_id FROM graph_changes ORDER BY entity_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ids := left()
		if slices.Equal(ids, []string{"ent_new"}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the change log holds %v 30 s after start, want only ent_new", ids)
		}
	}
}
