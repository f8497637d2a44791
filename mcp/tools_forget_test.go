package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/vector"
)

func TestForgetToolsValidationAndConsent(t *testing.T) {
	e := newEnv(t)
	saved := e.mustCall(t, "save_memory", map[string]any{"collection": "journal", "text": "Walked along the river at dawn"})
	id := saved["id"].(string)
	for _, tt := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"unknown mode", "delete_memory", map[string]any{"memory_ids": []string{id}, "mode": "forget"}},
		{"no mode", "delete_memory", map[string]any{"memory_ids": []string{id}}},
		{"no ids", "delete_memory", map[string]any{"mode": "erase"}},
		{"empty ids", "delete_memory", map[string]any{"memory_ids": []string{}, "mode": "erase"}},
		{"empty id", "delete_memory", map[string]any{"memory_ids": []string{""}, "mode": "retract"}},
		{"nothing to update", "update_memory", map[string]any{"memory_id": id}},
		{"empty text", "update_memory", map[string]any{"memory_id": id, "text": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, merr := e.call(t, tt.tool, tt.args); merr == nil || merr.Body.Code != mcp.CodeValidation {
				t.Errorf("%s %v: %v, want %s", tt.tool, tt.args, merr, mcp.CodeValidation)
			}
		})
	}

	// Write is not delete; no read is not found, exactly as a missing id.
	writer, _ := e.agent(t, e.owner.UserID, "writer", [3]string{"read", "memories/*", "allow"}, [3]string{"write", "memories/*", "allow"})
	stranger, _ := e.agent(t, e.owner.UserID, "stranger", [3]string{"delete", "memories/*", "allow"})
	deleter, _ := e.agent(t, e.owner.UserID, "deleter", [3]string{"read", "memories/journal", "allow"}, [3]string{"delete", "vectors/jour*", "allow"})
	if _, merr := e.callAs(t, writer, "delete_memory", map[string]any{"memory_ids": []string{id}, "mode": "retract"}); merr == nil ||
		merr.Body.Code != mcp.CodeConsentDenied || merr.Body.Details["action"] != "delete" {
		t.Errorf("delete without a delete rule: %v, want %s for delete", merr, mcp.CodeConsentDenied)
	}
	missing := vector.NewID()
	for _, c := range []struct {
		tool string
		args func(id string) map[string]any
	}{
		{"delete_memory", func(id string) map[string]any { return map[string]any{"memory_ids": []string{id}, "mode": "erase"} }},
		{"update_memory", func(id string) map[string]any { return map[string]any{"memory_id": id, "text": "x"} }},
	} {
		_, unreadable := e.callAs(t, stranger, c.tool, c.args(id))
		_, absent := e.callAs(t, stranger, c.tool, c.args(missing))
		if unreadable == nil || absent == nil || unreadable.Body.Code != mcp.CodeNotFound || absent.Body.Code != mcp.CodeNotFound ||
			strings.ReplaceAll(unreadable.Body.Message, id, "ID") != strings.ReplaceAll(absent.Body.Message, missing, "ID") ||
			fmt.Sprint(unreadable.Body.Details["id"]) != id {
			t.Errorf("%s: unreadable %v, missing %v; want the same %s", c.tool, unreadable, absent, mcp.CodeNotFound)
		}
	}
	if _, merr := e.callAs(t, writer, "update_memory", map[string]any{"memory_id": id, "text": "Swam in the lake at noon", "reason": "wrong place"}); merr != nil {
		t.Fatalf("update_memory: %v", merr)
	}
	if n := searchHits(t, e, "journal", "river dawn"); n != 0 {
		t.Errorf("the replaced text is still found (%d hits)", n)
	}
	if n := searchHits(t, e, "journal", "lake noon"); n != 1 {
		t.Errorf("the new text finds %d hits, want 1", n)
	}
	out, merr := e.callAs(t, deleter, "delete_memory", map[string]any{"memory_ids": []string{id, id}, "mode": "retract", "reason": "not true"})
	if merr != nil {
		t.Fatal(merr)
	}
	if ids, _ := out["memory_ids"].([]any); len(ids) != 1 || ids[0] != id || out["counts"].(map[string]any)["memories"] != 1.0 || out["mode"] != "retract" {
		t.Errorf("delete_memory answered %v", out)
	}
	if n := searchHits(t, e, "journal", "lake noon"); n != 0 {
		t.Errorf("a retracted memory is found (%d hits)", n)
	}
}

func searchHits(t *testing.T, e *env, collection, query string) int {
	t.Helper()
	out := e.mustCall(t, "search_memory", map[string]any{"collection": collection, "query": query})
	return len(out["results"].([]any))
}

// TestEraseLeavesNoTrace is the proof of issue 37 for memories: a marker
// planted in a memory's text, title, tags and metadata is, once the memory
// is erased, in no byte of the SQLite files (after the store's own
// compaction) and in no row of any PostgreSQL table; search_memory finds
// it by neither keyword nor meaning; a new export holds none of it; and
// the audit log holds the erasure but nothing of the content.
func TestEraseLeavesNoTrace(t *testing.T) {
	for _, b := range []storeBackend{embeddedBackend, postgresBackend} {
		t.Run(b.name, func(t *testing.T) {
			e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
			ctx := t.Context()
			marker := "zqv" + strings.TrimPrefix(vector.NewID(), "mem_")[:12] + "q"
			// The marker alone in each place, so that each must go: a
			// claim's value too, which a contradiction keeps for review.
			person := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"}}})
			personID := person["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
			saved := e.mustCall(t, "save_memory", map[string]any{
				"collection": "health", "text": "Diagnosis " + marker + " told in confidence", "title": "Title " + marker,
				"tags": []string{marker}, "metadata": map[string]any{"note": marker, marker: "key"},
				"claims": []any{map[string]any{"entity_id": personID, "field": "title", "value": "Surgeon " + marker}},
			})
			if ids, _ := saved["contradiction_ids"].([]any); len(ids) != 1 {
				t.Fatalf("the claim raised contradictions %v, want 1: %v", ids, saved)
			}
			other := e.mustCall(t, "save_memory", map[string]any{"collection": "health", "text": "Flu shot in October"})
			id := saved["id"].(string)
			if n := searchHits(t, e, "health", marker); n != 1 {
				t.Fatalf("before the erasure the marker finds %d memories, want 1", n)
			}
			if n := len(e.mustCall(t, "search_memory", map[string]any{"collection": "health", "query": "", "tags": []string{marker}})["results"].([]any)); n != 1 {
				t.Fatalf("before the erasure the tag finds %d memories", n)
			}
			userContext := func() []byte {
				t.Helper()
				out := e.mustCall(t, "get_user_context", map[string]any{"budget_tokens": 8000})
				delete(out, "meta")
				b, _ := json.Marshal(out)
				return b
			}
			if c := userContext(); !bytes.Contains(c, []byte(marker)) || !bytes.Contains(c, []byte(id)) {
				t.Fatalf("before the erasure get_user_context lacks the memory: %s", c)
			}
			text := "Diagnosis " + marker + " revised"
			if _, merr := e.call(t, "update_memory", map[string]any{"memory_id": id, "text": text, "reason": "revised"}); merr != nil {
				t.Fatal(merr)
			}
			// Compacted first, so that the marker is in the database file
			// itself and not only in SQLite's write-ahead log.
			if err := e.stores.memories.Compact(ctx); err != nil {
				t.Fatalf("compact: %v", err)
			}
			if !holdsMarker(t, e, marker) {
				t.Fatal("the store does not hold the marker before the erasure: the search below proves nothing")
			}
			if n := termRows(t, e, marker); n == 0 {
				t.Fatal("BM25's term statistics do not hold the marker before the erasure")
			}
			out := e.mustCall(t, "delete_memory", map[string]any{"memory_ids": []string{id}, "mode": "erase", "reason": "data-protection request"})
			if c := out["counts"].(map[string]any); c["memories"] != 1.0 || c["versions"] != 1.0 || c["retracted_memories"] != 0.0 || c["contradictions"] != 1.0 {
				t.Errorf("erase counts %v, want 1 memory, 1 earlier version and 1 contradiction", c)
			}
			if review := e.mustCall(t, "review_memories", map[string]any{"action": "list"}); strings.Contains(mustJSON(t, review), marker) {
				t.Errorf("review_memories still shows the erased memory's claim: %v", review)
			}
			if err := e.stores.memories.Compact(ctx); err != nil {
				t.Fatalf("compact: %v", err)
			}

			if holdsMarker(t, e, marker) {
				t.Error("the store still holds the marker after the erasure")
			}
			if n := termRows(t, e, marker); n > 0 {
				t.Errorf("BM25's term statistics still hold the marker in %d rows", n)
			}
			for _, q := range []map[string]any{
				{"collection": "health", "query": marker},
				{"collection": "health", "query": "Diagnosis told in confidence", "minSimilarity": 0.1},
				{"collection": "health", "query": "", "keywords": marker},
				{"collection": "health", "query": "", "tags": []string{marker}},
			} {
				res := e.mustCall(t, "search_memory", q)
				for _, h := range res["results"].([]any) {
					if h.(map[string]any)["id"] == id {
						t.Errorf("search %v finds the erased memory", q)
					}
				}
			}
			if c := userContext(); bytes.Contains(c, []byte(marker)) || bytes.Contains(c, []byte(id)) {
				t.Errorf("after the erasure get_user_context shows the memory: %s", c)
			}
			if n := searchHits(t, e, "health", "flu shot"); n != 1 {
				t.Errorf("the other memory is found %d times, want 1 (%v)", n, other["id"])
			}
			exp := newExport(t, e)
			if bytes.Contains(exp, []byte(marker)) {
				t.Error("a new export holds the marker")
			}
			if !bytes.Contains(exp, []byte(`"kind":"memory_tombstone"`)) || !bytes.Contains(exp, []byte(id)) {
				t.Error("a new export lacks the tombstone")
			}
			recs, raw := auditRecords(t, e)
			if bytes.Contains(raw, []byte(marker)) {
				t.Error("the audit log holds the marker")
			}
			erasure := false
			for _, r := range recs {
				erasure = erasure || (r.Tool == "delete_memory" && r.Action == consent.Delete && r.Resource == "memories/health" && r.Decision == consent.Allow)
			}
			if !erasure {
				t.Errorf("the audit log does not record the erasure: %s", raw)
			}
			ts, err := e.stores.memories.Tombstones(ctx, e.owner.UserID, []string{id})
			if err != nil || len(ts) != 1 || ts[0].Reason != "data-protection request" || ts[0].Collection != "health" || ts[0].At.IsZero() {
				t.Errorf("tombstone = %+v, %v", ts, err)
			}
		})
	}
}

// holdsMarker reports whether the backend's storage holds marker: on
// SQLite any byte of the store's files (database, WAL, shared memory), on
// PostgreSQL any row of any table of the test's schema, cast to text.
// termRows counts the rows of PostgreSQL's BM25 term statistics
// (memory_terms) for the lexeme marker; -1 on the embedded store, whose
// FTS5 index holdsMarker reads with the rest of the file.
func termRows(t *testing.T, e *env, marker string) int {
	t.Helper()
	if e.stores.pg == nil {
		return -1
	}
	var n int
	if err := e.stores.pg.Pool.QueryRow(t.Context(), `SELECT count(*) FROM memory_terms WHERE lexeme = $1`, marker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func holdsMarker(t *testing.T, e *env, marker string) bool {
	t.Helper()
	switch {
	case e.stores.sqlite != nil:
		files, err := filepath.Glob(e.stores.sqlite.Path + "*")
		if err != nil || len(files) == 0 {
			t.Fatalf("the store's files: %v, %v", files, err)
		}
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(b), []byte(marker)) {
				t.Logf("%s holds the marker", filepath.Base(f))
				found = true
			}
		}
		return found
	case e.stores.pg != nil:
		held, err := pgtest.TablesHolding(t.Context(), e.stores.pg.Pool, marker)
		if err != nil {
			t.Fatal(err)
		}
		for table, n := range held {
			t.Logf("table %s holds the marker in %d rows", table, n)
		}
		return len(held) > 0
	}
	t.Fatal("the backend has neither a SQLite store nor a PostgreSQL database")
	return false
}
