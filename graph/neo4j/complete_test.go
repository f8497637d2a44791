package neo4j_test

import (
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

var forgetCompletionKeys = cypher.Must("test_completion_keys_forget")

// TestCompletionKeysBackfill stores entities as a database before
// migration 007 holds them (no name_keys, no :EntityKey nodes) and checks
// that they complete once graph.BackfillTextSigs has given them their
// keys, as entities written since complete; that a backfill after that has
// nothing to do; and that writing the entities again unchanged keeps their
// keys as they are, one node each, as does a merge after it.
func TestCompletionKeysBackfill(t *testing.T) {
	srv := take(t)
	d := graphneo4j.New(srv.Driver, srv.Config.Database)
	s := graph.NewStore(d)
	ctx := t.Context()
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	ents := graphtest.BackfillEntities(at)
	put := func(es []graph.Entity) {
		t.Helper()
		if err := s.Update(ctx, func(tx *graph.Tx) error { return tx.PutEntities(ctx, es) }); err != nil {
			t.Fatal(err)
		}
	}
	put(ents)
	cypherRun := func(st cypher.Statement, params map[string]any) []*neo4j.Record {
		t.Helper()
		q, err := st.Cypher()
		if err != nil {
			t.Fatal(err)
		}
		res, err := neo4j.ExecuteQuery(ctx, srv.Driver, q, params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
		if err != nil {
			t.Fatal(err)
		}
		return res.Records
	}
	keyNodes := func() int64 {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, srv.Driver, `MATCH (k:EntityKey) RETURN count(k) AS n`, nil,
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.Records[0].Get("n")
		return n.(int64)
	}
	// Each unmerged entity: its name key, its two inner keys, its id.
	const wantKeys = 29 * 4
	if n := keyNodes(); n != wantKeys {
		t.Fatalf("%d key nodes after the put, want %d", n, wantKeys)
	}
	cypherRun(forgetCompletionKeys, map[string]any{"userIds": []string{"alice"}})
	if n := keyNodes(); n != 0 {
		t.Fatalf("%d key nodes after forget, want none", n)
	}

	complete := func(q graph.EntityCompletion) []string {
		t.Helper()
		return graphtest.CompletedIDs(t, s, q)
	}
	names := graph.EntityCompletion{UserID: "alice", Prefix: graph.CompletionKey("ÖLWERK nummer 00"), Limit: 100}
	ids := graph.EntityCompletion{UserID: "alice", Prefix: "ent_b00", IDs: true, Limit: 100}
	inner := graph.EntityCompletion{UserID: "alice", Prefix: graph.CompletionKey("nummer 02"), Limit: 100}
	want := []string{"ent_b000", "ent_b001", "ent_b002", "ent_b004", "ent_b005", "ent_b006", "ent_b007", "ent_b008", "ent_b009"}
	if got := complete(names); len(got) != 0 {
		t.Errorf("names before the backfill = %v, want none", got)
	}
	n, err := graph.BackfillTextSigs(ctx, d, nil)
	if err != nil || n != len(ents) {
		t.Fatalf("BackfillTextSigs = %d, %v; want %d", n, err, len(ents))
	}
	check := func(when string) {
		t.Helper()
		if got := complete(names); !slices.Equal(got, want) {
			t.Errorf("names %s = %v, want %v", when, got, want)
		}
		if got := complete(inner); len(got) != 10 {
			t.Errorf("inner keys %s: %v, want the 10 of 020-029", when, got)
		}
		if got := complete(ids); !slices.Equal(got, want) {
			t.Errorf("ids %s = %v, want %v", when, got, want)
		}
		if n := keyNodes(); n != wantKeys {
			t.Errorf("%d key nodes %s, want %d", n, when, wantKeys)
		}
	}
	check("after the backfill")
	if n, err := graph.BackfillTextSigs(ctx, d, nil); err != nil || n != 0 {
		t.Errorf("a second BackfillTextSigs = %d, %v; want 0", n, err)
	}
	put(ents)
	check("after the same entities are written again")
	// A merge after the backfill takes the merged entity's keys away.
	merged := ents[9]
	merged.MergedInto, merged.MergedAt = "ent_b000", at
	put([]graph.Entity{merged})
	want = slices.DeleteFunc(want, func(id string) bool { return id == merged.ID })
	if got := complete(names); !slices.Equal(got, want) {
		t.Errorf("names after a merge = %v, want %v", got, want)
	}
	if n := keyNodes(); n != wantKeys-4 {
		t.Errorf("%d key nodes after a merge, want %d", n, wantKeys-4)
	}
}
