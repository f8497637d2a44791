package controlplane_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	_ "github.com/cairnkg/cairn/db/sqlite" // registers the "sqlite" driver
	"github.com/cairnkg/cairn/migrations"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// compactVersion is the migration that made the audit log compact.
const compactVersion = 10

// TestMigrateAuditLog writes records in 004's layout, applies the compact
// layout's migration, and reads them back through QueryAudit, filters and
// all: every field of every record, its id included, is as it was, and new
// records continue the ids.
func TestMigrateAuditLog(t *testing.T) {
	for _, be := range []struct {
		name    string
		dialect migrations.Dialect
		open    func(t *testing.T) *sql.DB
	}{
		{"SQLite", migrations.SQLite, func(t *testing.T) *sql.DB {
			db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "old.db"))
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			return db
		}},
		{"Postgres", migrations.Postgres, func(t *testing.T) *sql.DB {
			db, err := sql.Open("pgx", pgtest.EmptyURL(t))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	} {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := be.open(t)
			t.Cleanup(func() { db.Close() })
			all, err := migrations.Load(be.dialect)
			if err != nil {
				t.Fatal(err)
			}
			apply := func(keep func(v int) bool) {
				t.Helper()
				for _, m := range all {
					if keep(m.Version) {
						if _, err := db.ExecContext(ctx, m.SQL); err != nil {
							t.Fatalf("apply %03d_%s: %v", m.Version, m.Name, err)
						}
					}
				}
			}
			apply(func(v int) bool { return v < compactVersion })

			base := time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)
			var old []consent.AuditRecord
			for i := range 40 {
				r := consent.AuditRecord{At: base.Add(time.Duration(i) * time.Minute), UserID: "user-a", AgentID: "agt_1", AgentName: "claude",
					KeyID: "key_1", Transport: "http", Tool: "store", Kind: consent.AuditCall, Decision: consent.Allow, ResultCode: "OK",
					Latency: time.Duration(i*1013) * time.Microsecond, RequestID: fmt.Sprintf("trace_%016x", uint64(i)*0x9e3779b97f4a7c15),
					Count: 1} // every record of 004 stood for one decision
				switch i % 5 {
				case 1:
					r.Kind, r.Action, r.Resource, r.Decision = consent.AuditDecision, consent.Write, "entities/person", consent.Deny
					r.ResultCode = "CONSENT_DENIED"
				case 2:
					r.AgentID, r.AgentName, r.KeyID, r.Transport, r.Tool = "agt_2", "cursor", "", "stdio", "retrieve_entities"
				case 3:
					r.RequestID = "req-" + fmt.Sprint(i) // not of Cairn's form
				case 4:
					r.RequestID = "trace_ABCDEF0123456789" // uppercase: kept as text
				}
				if i == 39 {
					r.UserID, r.RequestID = "user-b", ""
				}
				old = append(old, r)
			}
			for _, r := range old {
				if _, err := db.ExecContext(ctx, `INSERT INTO audit_log (at, user_id, agent_id, agent_name, key_id, transport, tool, kind, action, resource, decision, result_code, latency_us, request_id)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, r.At.UnixMicro(), r.UserID, r.AgentID, r.AgentName,
					r.KeyID, r.Transport, r.Tool, r.Kind, string(r.Action), r.Resource, string(r.Decision), r.ResultCode,
					r.Latency.Microseconds(), r.RequestID); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := db.QueryContext(ctx, `SELECT id FROM audit_log ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; rows.Next(); i++ {
				if err := rows.Scan(&old[i].ID); err != nil {
					t.Fatal(err)
				}
			}
			rows.Close()

			apply(func(v int) bool { return v >= compactVersion })
			s := controlplane.New(db, be.dialect)

			newestFirst := func(keep func(consent.AuditRecord) bool) []consent.AuditRecord {
				var out []consent.AuditRecord
				for i := len(old) - 1; i >= 0; i-- {
					if keep(old[i]) {
						out = append(out, old[i])
					}
				}
				return out
			}
			for _, tc := range []struct {
				name string
				q    consent.AuditQuery
				keep func(consent.AuditRecord) bool
			}{
				{"all of a user", consent.AuditQuery{UserID: "user-a", Limit: 100}, func(r consent.AuditRecord) bool { return r.UserID == "user-a" }},
				{"the other user", consent.AuditQuery{UserID: "user-b"}, func(r consent.AuditRecord) bool { return r.UserID == "user-b" }},
				{"agent", consent.AuditQuery{UserID: "user-a", AgentName: "cursor"}, func(r consent.AuditRecord) bool {
					return r.UserID == "user-a" && r.AgentName == "cursor"
				}},
				{"tool, kind and decision", consent.AuditQuery{UserID: "user-a", Tool: "store", Kind: consent.AuditDecision, Decision: consent.Deny},
					func(r consent.AuditRecord) bool {
						return r.UserID == "user-a" && r.Tool == "store" && r.Kind == consent.AuditDecision && r.Decision == consent.Deny
					}},
				{"time and page", consent.AuditQuery{UserID: "user-a", Since: base.Add(5 * time.Minute), Until: base.Add(30 * time.Minute), BeforeID: old[25].ID, Limit: 7},
					func(r consent.AuditRecord) bool {
						return r.UserID == "user-a" && !r.At.Before(base.Add(5*time.Minute)) && r.At.Before(base.Add(30*time.Minute)) && r.ID < old[25].ID
					}},
				{"an unknown agent", consent.AuditQuery{UserID: "user-a", AgentName: "nobody"}, func(consent.AuditRecord) bool { return false }},
				{"an unknown tool", consent.AuditQuery{UserID: "user-a", Tool: "nothing"}, func(consent.AuditRecord) bool { return false }},
				{"an unknown user", consent.AuditQuery{UserID: "user-z"}, func(consent.AuditRecord) bool { return false }},
			} {
				want := newestFirst(tc.keep)
				if limit := tc.q.Limit; limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				got, err := s.QueryAudit(ctx, tc.q)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s after migration (-want +got):\n%s", tc.name, diff)
				}
			}

			// New records continue the ids, and read back as written.
			next := old[0]
			next.At, next.RequestID = base.Add(time.Hour), "trace_00000000000000ff"
			if err := s.AppendAudit(ctx, []consent.AuditRecord{next}); err != nil {
				t.Fatal(err)
			}
			got, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: "user-a", Limit: 1})
			if err != nil || len(got) != 1 {
				t.Fatalf("newest = %v, %v", got, err)
			}
			if got[0].ID <= old[len(old)-1].ID {
				t.Errorf("new record's id %d does not follow the migrated ones (up to %d)", got[0].ID, old[len(old)-1].ID)
			}
			next.ID = got[0].ID
			if diff := cmp.Diff(next, got[0]); diff != "" {
				t.Errorf("new record (-want +got):\n%s", diff)
			}
		})
	}
}
