package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
)

// TestStorageFootprint measures what Cairn keeps on disk for a known load,
// through the tools as a client calls them (so with the audit records that
// creates): CAIRN_FOOTPRINT_ENTITIES entities (default 10,000) of 3 facts
// each, stored in batches of 100, one relationship per call between
// neighbours of each batch (CAIRN_FOOTPRINT_RELATIONSHIPS a batch, default
// 100: 99), and CAIRN_FOOTPRINT_MEMORIES memories (default 1,000). It prints
// bytes per table and per entity and memory, for docs/performance.md. It
// measures, asserts nothing, and takes minutes: it runs only with
// CAIRN_FOOTPRINT=1 (CAIRN_FOOTPRINT=postgres for PostgreSQL, with
// CAIRN_TEST_DATABASE_URL).
func TestStorageFootprint(t *testing.T) {
	mode := os.Getenv("CAIRN_FOOTPRINT")
	if mode == "" {
		t.Skip("set CAIRN_FOOTPRINT=1 (or postgres) to measure the storage footprint")
	}
	entities, rels, memories := envInt("CAIRN_FOOTPRINT_ENTITIES", 10000), envInt("CAIRN_FOOTPRINT_RELATIONSHIPS", 100),
		envInt("CAIRN_FOOTPRINT_MEMORIES", 1000)
	ctx := t.Context()
	cfg := appConfig{dataDir: t.TempDir()}
	if mode == "postgres" {
		cfg.databaseURL = pgtest.URL(t)
	}
	a, err := startApp(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := bootstrapOwner(ctx, a, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	owner, err := a.control.OwnerPrincipal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args any) json.RawMessage {
		t.Helper()
		raw, _ := json.Marshal(args)
		resp := a.mcp.Handle(ctx, mcp.Request{Principal: owner, Tool: tool, Args: raw, Transport: mcp.TransportStdio})
		if resp.Err != nil {
			t.Fatalf("%s: %+v", tool, resp.Err.Body)
		}
		return resp.Output
	}
	a.startEntityEmbeddings(ctx)
	const batch = 100
	relCount := 0
	for start := 0; start < entities; start += batch {
		var ents []map[string]any
		for i := start; i < min(entities, start+batch); i++ {
			ents = append(ents, map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %06d", i),
				"email": fmt.Sprintf("person%06d@example.com", i), "city": fmt.Sprintf("City %d", i%97)})
		}
		var out struct {
			Entities []struct {
				EntityID string `json:"entity_id"`
			} `json:"entities"`
		}
		if err := json.Unmarshal(call("store", map[string]any{"entities": ents}), &out); err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(out.Entities) && i < rels; i++ {
			call("create_relationship", map[string]any{"relationship_type": "REFERS_TO",
				"source_entity_id": out.Entities[i].EntityID, "target_entity_id": out.Entities[i+1].EntityID})
			relCount++
		}
	}
	for i := range memories {
		call("save_memory", map[string]any{"collection": "notes",
			"text": fmt.Sprintf("Note %d: met person %06d in city %d to talk about the quarterly plan", i, i*7%max(entities, 1), i%97)})
	}
	if err := a.audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.knowledge.DrainEntityOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	sizes, total, err := tableSizes(ctx, a.backend.control, a.backend.dialect)
	if err != nil {
		t.Fatal(err)
	}
	var auditRows int64
	if err := a.backend.control.QueryRowContext(ctx, `SELECT count(*) FROM audit_log`).Scan(&auditRows); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%s: %d entities, %d relationships, %d memories, %d audit rows\t\t\t\n", a.backend.dialect, entities, relCount, memories, auditRows)
	fmt.Fprintf(w, "group\tbytes\tper entity\tper memory\t\n")
	groups := map[string]int64{}
	for name, n := range sizes {
		groups[footprintGroup(name)] += n
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	slices.Sort(names)
	per := func(n int64, d int) string {
		if d == 0 {
			return "-"
		}
		return strconv.FormatInt(n/int64(d), 10)
	}
	for _, g := range names {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t\n", g, groups[g], per(groups[g], entities), per(groups[g], memories))
	}
	fmt.Fprintf(w, "total\t%d\t%s\t%s\t\n", total, per(total, entities), per(total, memories))
	fmt.Fprintf(w, "audit bytes per row\t%s\t\t\t\n", per(groups["audit"], int(auditRows)))
	w.Flush()
	t.Log("\n" + b.String())
	if mode != "postgres" {
		if fi, err := os.Stat(filepath.Join(cfg.dataDir, "cairn.db")); err == nil {
			t.Logf("SQLite file: %d bytes", fi.Size())
		}
	}
}

// footprintGroup sorts a table (or index) into what it stores.
func footprintGroup(table string) string {
	switch {
	case strings.HasPrefix(table, "audit"):
		return "audit"
	case strings.HasPrefix(table, "entity_embeddings"):
		return "entity embeddings"
	case strings.HasPrefix(table, "memor"):
		return "memories"
	}
	return "other"
}

// tableSizes returns the bytes of every table with its indexes: dbstat on
// SQLite (after a checkpoint), pg_total_relation_size on PostgreSQL.
func tableSizes(ctx context.Context, db *sql.DB, d migrations.Dialect) (map[string]int64, int64, error) {
	q := `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
		WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`
	if d == migrations.SQLite {
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return nil, 0, err
		}
		q = `SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := map[string]int64{}
	var total int64
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, 0, err
		}
		out[name] += n
		total += n
	}
	return out, total, rows.Err()
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}
