package postgres_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	"github.com/cairnkg/cairn/graph/postgres"
)

// TestCompletionKeysBackfill stores entities as a database before
// migration 032 holds them (no name keys, no completion keys), runs what
// the migration runs on such rows, and checks that their ids complete at
// once and their names once graph.BackfillTextSigs has given them their
// keys, as entities written since complete.
func TestCompletionKeysBackfill(t *testing.T) {
	db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := postgres.New(db.Pool)
	s := graph.NewStore(d)
	ctx := t.Context()
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	ents := graphtest.BackfillEntities(at)
	if err := s.Update(ctx, func(tx *graph.Tx) error { return tx.PutEntities(ctx, ents) }); err != nil {
		t.Fatal(err)
	}
	// Before the migration: no name_keys, no entity_keys (with the
	// triggers off, which the migration creates after its ALTER TABLE).
	for _, q := range []string{
		`ALTER TABLE entities DISABLE TRIGGER entity_keys_update`,
		`UPDATE entities SET name_keys = NULL`,
		`ALTER TABLE entities ENABLE TRIGGER entity_keys_update`,
		`DELETE FROM entity_keys`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	src, err := os.ReadFile("../../migrations/postgres/032_entity_completion.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, tail, ok := strings.Cut(string(src), "-- Entities stored before this migration")
	if !ok {
		t.Fatal("migration 032 no longer backfills under its comment")
	}
	if _, err := db.Pool.Exec(ctx, "--"+tail); err != nil {
		t.Fatalf("migration 032's backfill: %v", err)
	}

	complete := func(q graph.EntityCompletion) []string {
		t.Helper()
		return graphtest.CompletedIDs(t, s, q)
	}
	names := graph.EntityCompletion{UserID: "alice", Prefix: graph.CompletionKey("ÖLWERK nummer 00"), Limit: 100}
	ids := graph.EntityCompletion{UserID: "alice", Prefix: "ent_b00", IDs: true, Limit: 100}
	want := []string{"ent_b000", "ent_b001", "ent_b002", "ent_b004", "ent_b005", "ent_b006", "ent_b007", "ent_b008", "ent_b009"}
	if got := complete(ids); !slices.Equal(got, want) {
		t.Errorf("ids after the migration = %v, want %v", got, want)
	}
	if got := complete(names); len(got) != 0 {
		t.Errorf("names before the backfill = %v, want none", got)
	}
	n, err := graph.BackfillTextSigs(ctx, d, nil)
	if err != nil || n != len(ents) {
		t.Fatalf("BackfillTextSigs = %d, %v; want %d", n, err, len(ents))
	}
	if got := complete(names); !slices.Equal(got, want) {
		t.Errorf("names after the backfill = %v, want %v", got, want)
	}
	inner := graph.EntityCompletion{UserID: "alice", Prefix: graph.CompletionKey("nummer 02"), Limit: 100}
	if got := complete(inner); len(got) != 10 {
		t.Errorf("inner keys after the backfill: %v, want the 10 of 020-029", got)
	}
	if got := complete(ids); !slices.Equal(got, want) {
		t.Errorf("ids after the backfill = %v, want %v", got, want)
	}
}
