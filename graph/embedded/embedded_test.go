package embedded_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// harness opens a fresh embedded store in the test's temporary directory.
func harness(t *testing.T) *graph.Store { return openStore(t) }

// openStore opens a fresh embedded store in tb's temporary directory.
func openStore(tb testing.TB) *graph.Store {
	tb.Helper()
	s := graph.NewStore(embedded.New(sqlitetest.Open(tb)))
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close graph: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, harness) }

func TestTextSigBackfill(t *testing.T) {
	db := sqlitetest.Open(t)
	graphtest.TextSigBackfill(t, embedded.New(db), func(t *testing.T) {
		if _, err := db.Write.ExecContext(t.Context(), `UPDATE entities SET text_sig = NULL`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCommitAfterTheContextEnded checks that a transaction whose context
// ends before it commits fails with the context's error, which callers
// answer as a timeout or a cancellation, rather than with database/sql's
// "transaction has already been committed or rolled back".
func TestCommitAfterTheContextEnded(t *testing.T) {
	s := openStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.View(ctx, func(tx *graph.Tx) error {
		if _, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: "u"}); err != nil {
			return err
		}
		cancel()
		// Until database/sql has rolled the transaction back, as it does
		// when the context ends: a commit now finds it done.
		for deadline := time.Now().Add(10 * time.Second); ; {
			_, err := tx.ListEntityStats(context.Background(), graph.EntityFilter{UserID: "u"})
			if errors.Is(err, sql.ErrTxDone) {
				return nil
			}
			if time.Now().After(deadline) {
				t.Fatalf("the transaction was not rolled back after its context ended: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("View whose context ended before its commit: %v, want context.Canceled", err)
	}
}
