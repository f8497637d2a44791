package graphtest

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

func testSources(t *testing.T, newStore Harness) {
	s := newStore(t)
	src := newSource(alice, "src_alice_1", at(epoch, 1))
	src.Provenance = map[string]any{"agent": "claude", "n": 7, "ratio": 0.25, "tags": []any{"a", 1}}
	putSources(t, s, src)
	want := src
	want.Provenance = jsonValue(t, src.Provenance)

	t.Run("RoundTrip", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.Source(ctx, alice, src.ID)
		})
		diff(t, "Source", want, got)
		got = view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.SourceByHash(ctx, alice, src.ContentHash)
		})
		diff(t, "SourceByHash", want, got)
	})

	t.Run("DuplicateID", func(t *testing.T) {
		again := newSource(alice, src.ID, at(epoch, 2))
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertSource(ctx, again) })
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertSource of an existing id: err = %v, want graph.ErrConflict", err)
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.Source(ctx, alice, src.ID)
		})
		diff(t, "Source after a refused insert", want, got)
	})

	t.Run("Missing", func(t *testing.T) {
		err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Source(ctx, alice, "src_alice_missing")
			return err
		})
		wantNotFoundError(t, "Source", err, "src_alice_missing")
		err = tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.SourceByHash(ctx, alice, "feedface")
			return err
		})
		wantNotFound(t, "SourceByHash", err)
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("SourceByHash: err = %v, want a *graph.NotFoundError", err)
		}
	})
}
