package transfer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gocloud.dev/blob"

	"github.com/cairnkg/cairn/consent"
	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector/embed"
)

// An import erases what the store still holds of the entities and sources
// the export's graph tombstones name, as erase does, and keeps the
// export's tombstones: a copy made before an erasure (a restored backup)
// forgets what the live store forgot once the live store's export is
// imported into it. Another user's entity of the same name stays.
func TestImportErasesGraphTombstones(t *testing.T) {
	for _, open := range forgetBackends {
		t.Run(open.name, func(t *testing.T) {
			src, clk, u, c := forgetUser(t, open.open, "fay")
			ctx := t.Context()
			const marker, otherMarker = "zqvimporterasedq", "zqvotheruserkeptq"
			other, err := src.stores.Control.CreateUser(ctx, "gus")
			if err != nil {
				t.Fatal(err)
			}
			co := knowledge.Caller{UserID: other.ID, AgentID: "claude"}
			store := func(c knowledge.Caller, es ...map[string]any) []string {
				t.Helper()
				res, err := src.svc.Store(ctx, c, knowledge.StoreRequest{Entities: es})
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(res.Entities))
				for i, e := range res.Entities {
					ids[i] = e.EntityID
				}
				return ids
			}
			// X, to erase; Y, which a source S (to erase) adds a field to;
			// Q2 merged into Q1, to erase (Q1 is computed again); a stored
			// file F with a memory made from it, to erase.
			xy := store(c, map[string]any{"entity_type": "person", "name": "Ann Lee", "nickname": marker, "shoe": marker},
				map[string]any{"entity_type": "person", "name": "Bob Stone", "title": "Nurse"})
			x, y := xy[0], xy[1]
			sres, err := src.svc.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{
				{"entity_type": "person", "name": "Bob Stone", "title": "Surgeon " + marker}}})
			if err != nil {
				t.Fatal(err)
			}
			s := sres.Source.ID
			q1 := store(c, map[string]any{"entity_type": "person", "name": "Dee Fox", "title": "Pilot"})[0]
			q2 := store(c, map[string]any{"entity_type": "person", "name": "Dee F", "nickname": marker})[0]
			if _, err := src.svc.MergeEntities(ctx, c, q2, q1, "same person"); err != nil {
				t.Fatal(err)
			}
			put, err := src.files.Put(ctx, c, strings.NewReader("the file says "+marker+"\n"), files.PutRequest{Filename: "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			f := put.File.ID
			if _, err := src.svc.SaveMemory(ctx, c, knowledge.MemoryRequest{Collection: "notes", Text: "from the file: " + marker, SourceID: f}); err != nil {
				t.Fatal(err)
			}
			// Gus's entity of the same name: an id of the same pattern.
			gx := store(co, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": otherMarker})[0]

			opts := transfer.ExportOptions{Users: []consent.User{u, other}}
			before := exported(t, src.stores, opts)
			dst := open.open(t, clk)
			imported(t, dst.stores, before)
			if !dst.holds(t, marker) {
				t.Fatal("the copy does not hold the marker before the erasure: the check below could not fail")
			}

			want := map[string]int{}
			for _, e := range []knowledge.EraseRequest{
				{Kind: knowledge.EraseEntity, IDs: []string{x}, Reason: "asked"},
				{Kind: knowledge.EraseSource, IDs: []string{s}, Reason: "wrong source"},
				{Kind: knowledge.EraseEntity, IDs: []string{q2}, Reason: "asked"},
				{Kind: knowledge.EraseSource, IDs: []string{f}, Reason: "the file must go"},
			} {
				res, err := src.svc.Erase(ctx, c, e)
				if err != nil {
					t.Fatalf("erase %v: %v", e.IDs, err)
				}
				for k, n := range res.Counts {
					if n != 0 {
						want[k] += n
					}
				}
			}
			if src.holds(t, marker) {
				t.Fatal("the store that erased still holds the marker")
			}
			after := exported(t, src.stores, opts)

			st := importedBy(t, dst, after)
			// Each erasure the import made is in the audit log, without
			// ids or reasons.
			recs, err := dst.stores.Control.QueryAudit(ctx, consent.AuditQuery{UserID: u.ID, Tool: "import", Limit: 100})
			if err != nil || len(recs) == 0 || strings.Contains(fmt.Sprintf("%+v", recs), "wrong source") {
				t.Errorf("the audit of the import's erasures: %+v, %v", recs, err)
			}
			if diff := cmp.Diff(want, st.Erased); diff != "" {
				t.Errorf("the import erased (-what the erasures erased +what it says it erased):\n%s", diff)
			}
			assertErased(t, dst, u.ID, c, []string{x, q2}, []string{s, f})
			if dst.holds(t, marker) {
				t.Error("the copy holds the marker after the import")
			}
			// What the erasures computed again is the same in both stores.
			for _, id := range []string{y, q1} {
				a, err := src.svc.EntitySnapshot(ctx, c, id, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := dst.svc.EntitySnapshot(ctx, c, id, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(a.Entity.Snapshot, b.Entity.Snapshot); diff != "" {
					t.Errorf("entity %s after the import (-in the store that erased +in the copy):\n%s", id, diff)
				}
			}
			// The tombstones are the export's: time, actor, reason, counts.
			ta, err := src.stores.Control.GraphTombstones(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := dst.stores.Control.GraphTombstones(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			// Five: the four erased, and the source of the merged
			// duplicate's observations, which its erasure left with none.
			if len(ta) != 5 {
				t.Errorf("the store that erased has %d tombstones, want 5: %+v", len(ta), ta)
			}
			if diff := cmp.Diff(ta, tb); diff != "" {
				t.Errorf("tombstones (-in the store that erased +in the copy):\n%s", diff)
			}
			// Gus's entity is untouched.
			gs, err := dst.svc.EntitySnapshot(ctx, co, gx, time.Time{})
			if err != nil || gs.Entity.Snapshot["title"] != otherMarker {
				t.Errorf("the other user's entity after the import: %+v, %v", gs.Entity.Snapshot, err)
			}
			if !dst.holds(t, otherMarker) {
				t.Error("the other user's entity left the store")
			}

			// The copy is the store that erased, but for when the entities
			// were computed again.
			if got, want := withoutComputedAt(exported(t, dst.stores, opts)), withoutComputedAt(after); !bytes.Equal(got, want) {
				t.Errorf("the copy exports differently from the store that erased (-want +got):\n%s",
					cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
			}

			// Again: nothing more is erased, nothing written.
			again := importedBy(t, dst, after)
			if again.Erased != nil {
				t.Errorf("the second import erased %v", again.Erased)
			}
			for kind, n := range again.Written {
				if n != 0 {
					t.Errorf("the second import wrote %d %s", n, kind)
				}
			}
			// And the export made before the erasures brings nothing back.
			old := importedBy(t, dst, before)
			if old.Erased != nil || old.Skipped[transfer.SkipErased][transfer.KindFile] != 1 {
				t.Errorf("the older export: erased %v, skipped %v; want nothing erased, the file skipped as erased", old.Erased, old.Skipped)
			}
			assertErased(t, dst, u.ID, c, []string{x, q2}, []string{s, f})
			if dst.holds(t, marker) {
				t.Error("the older export brought the marker back")
			}
		})
	}
}

// An export whose graph was read before an erasure and whose tombstones
// after it (export reads the control plane last) holds the erased entity's
// lines and its tombstone: an import into a store that held nothing of the
// user writes the entity, then erases it; a store whose user does not
// exist yet has nothing else to erase.
func TestImportErasesWhatItWrote(t *testing.T) {
	for _, open := range forgetBackends {
		t.Run(open.name, func(t *testing.T) {
			src, clk, u, c := forgetUser(t, open.open, "hal")
			ctx := t.Context()
			const marker = "zqvwrittenerasedq"
			res, err := src.svc.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{
				{"entity_type": "person", "name": "Ivy Moss", "nickname": marker}}})
			if err != nil {
				t.Fatal(err)
			}
			x := res.Entities[0].EntityID
			put, err := src.files.Put(ctx, c, strings.NewReader("the file says "+marker+"\n"), files.PutRequest{Filename: "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			opts := transfer.ExportOptions{Users: []consent.User{u}}
			before := exported(t, src.stores, opts)
			for _, e := range []knowledge.EraseRequest{
				{Kind: knowledge.EraseEntity, IDs: []string{x}, Reason: "asked"},
				{Kind: knowledge.EraseSource, IDs: []string{put.File.ID}, Reason: "asked"},
			} {
				if _, err := src.svc.Erase(ctx, c, e); err != nil {
					t.Fatal(err)
				}
			}
			after := exported(t, src.stores, opts)

			// The new export into a store without the user: nothing to
			// erase, the tombstones recorded.
			fresh := open.open(t, clk)
			if st := importedBy(t, fresh, after); st.Erased != nil {
				t.Errorf("an import into a store without the user erased %v", st.Erased)
			}
			// Three: the entity, the source its erasure left with no
			// observation, and the file.
			if ts, err := fresh.stores.Control.GraphTombstones(ctx, u.ID); err != nil || len(ts) != 3 {
				t.Errorf("tombstones after the import: %+v, %v", ts, err)
			}

			mixed := withTombstonesOf(t, before, after)
			dst := open.open(t, clk)
			st := importedBy(t, dst, mixed)
			if st.Written[transfer.KindEntity] != 1 || st.Written[transfer.KindFile] != 1 || st.Erased["entities"] != 1 || st.Erased["files"] != 1 {
				t.Errorf("the import wrote %v and erased %v; want the entity and the file written, then erased", st.Written, st.Erased)
			}
			assertErased(t, dst, u.ID, c, []string{x}, []string{put.File.ID})
			if dst.holds(t, marker) {
				t.Error("the store holds the marker after the import")
			}
			if again := importedBy(t, dst, mixed); again.Erased != nil || again.Skipped[transfer.SkipErased][transfer.KindEntity] != 1 {
				t.Errorf("the second import erased %v and skipped %v; want nothing erased, the entity skipped as erased", again.Erased, again.Skipped)
			}
		})
	}
}

// An import without an eraser cannot honour a tombstone of what the store
// holds: it fails there, and records none of those tombstones.
func TestImportWithoutEraser(t *testing.T) {
	src, clk, u, c := forgetUser(t, openEmbedded, "ida")
	ctx := t.Context()
	res, err := src.svc.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": "Jo March"}}})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Entities[0].EntityID
	opts := transfer.ExportOptions{Users: []consent.User{u}}
	dst := openEmbedded(t, clk)
	imported(t, dst.stores, exported(t, src.stores, opts))
	if _, err := src.svc.Erase(ctx, c, knowledge.EraseRequest{Kind: knowledge.EraseEntity, IDs: []string{x}}); err != nil {
		t.Fatal(err)
	}
	_, err = transfer.Import(ctx, dst.stores, bytes.NewReader(exported(t, src.stores, opts)), transfer.ImportOptions{Embedder: embed.NewLocal()})
	if err == nil || !strings.Contains(err.Error(), x) {
		t.Errorf("import without an eraser: %v; want an error naming %s", err, x)
	}
	if ts, err := dst.stores.Control.GraphTombstones(ctx, u.ID); err != nil || len(ts) != 0 {
		t.Errorf("tombstones recorded: %+v, %v", ts, err)
	}
}

// withoutComputedAt returns an export without its entities' computed_at
// and its checksum.
func withoutComputedAt(file []byte) []byte {
	return regexp.MustCompile(`"computed_at":"[^"]*",|,"sha256":"[^"]*"`).ReplaceAll(file, nil)
}

// importedBy imports file into b, erasing with b's knowledge service.
func importedBy(t *testing.T, b backend, file []byte) transfer.Stats {
	t.Helper()
	st, err := transfer.Import(t.Context(), b.stores, bytes.NewReader(file),
		transfer.ImportOptions{Embedder: embed.NewLocal(), BatchSize: 3, Eraser: b.svc})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return st
}

// assertErased checks that b holds none of the entities and sources, nor
// a stored file of those sources.
func assertErased(t *testing.T, b backend, user string, c knowledge.Caller, entities, sources []string) {
	t.Helper()
	ctx := t.Context()
	for _, id := range entities {
		if _, err := b.svc.EntitySnapshot(ctx, c, id, time.Time{}); !errors.Is(err, knowledge.ErrEntityNotFound) {
			t.Errorf("snapshot of erased entity %s: %v, want not found", id, err)
		}
	}
	err := b.stores.Graph.View(ctx, func(tx *graph.Tx) error {
		for _, id := range sources {
			if _, err := tx.Source(ctx, user, id); !errors.Is(err, graph.ErrNotFound) {
				t.Errorf("erased source %s: %v, want not found", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sources {
		if _, err := b.stores.Control.File(ctx, user, id); err != nil && !errors.Is(err, files.ErrFileNotFound) {
			t.Fatal(err)
		} else if err == nil {
			t.Errorf("the file of erased source %s is still stored", id)
		}
	}
}

// withTombstonesOf returns the export before, of one user, with the graph
// tombstone rows of the export after added after its lines, its end
// line's counts set again and its checksum removed: what an export whose
// graph was read before an erasure and whose control plane after holds.
func withTombstonesOf(t *testing.T, before, after []byte) []byte {
	t.Helper()
	var rows [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(after), []byte("\n")) {
		if bytes.Contains(l, []byte(`"table":"graph_tombstones"`)) {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		t.Fatal("the export after the erasure has no graph tombstone")
	}
	lines := bytes.Split(bytes.TrimSpace(before), []byte("\n"))
	end := lines[len(lines)-1]
	var l struct {
		Kind string         `json:"kind"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(end, &l); err != nil || l.Kind != transfer.KindEnd {
		t.Fatalf("the last line is not an end line: %s", end)
	}
	counts, ok := l.Data["counts"].(map[string]any)
	if !ok {
		t.Fatalf("the end line has no counts: %s", end)
	}
	n, _ := counts[transfer.KindRow].(float64)
	counts[transfer.KindRow] = n + float64(len(rows))
	delete(l.Data, "sha256")
	end, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append(lines[:len(lines)-1:len(lines)-1], rows...), end)
	return append(bytes.Join(out, []byte("\n")), '\n')
}

// sqliteHolds reports whether any byte of the embedded store's files
// (database, write-ahead log, shared memory) holds s.
func sqliteHolds(t *testing.T, db *sqlite.DB, s string) bool {
	t.Helper()
	paths, err := filepath.Glob(db.Path + "*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("the store's files: %v, %v", paths, err)
	}
	found := false
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			t.Logf("%s holds %q", filepath.Base(p), s)
			found = true
		}
	}
	return found
}

// postgresHolds reports whether any row of any table of the test's
// database, cast to text, holds s.
func postgresHolds(t *testing.T, db *dbpostgres.DB, s string) bool {
	t.Helper()
	held, err := pgtest.TablesHolding(t.Context(), db.Pool, s)
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range held {
		t.Logf("table %s holds %q in %d rows", table, s, n)
	}
	return len(held) > 0
}

// bucketHolds reports whether any blob of the bucket holds s.
func bucketHolds(t *testing.T, b *blob.Bucket, s string) bool {
	t.Helper()
	found := false
	it := b.List(nil)
	for {
		obj, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return found
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(t.Context(), obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(s)) {
			t.Logf("blob %s holds %q", obj.Key, s)
			found = true
		}
	}
}
