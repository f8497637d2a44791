package graphtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/graph"
)

// The users of the suite. Every id a test makes starts with the user's name,
// so that ids never collide across users, whatever a backend's keys are.
const (
	alice = "alice"
	bob   = "bob"
)

// equate compares rows: times with time.Equal (cmp uses the Equal method),
// and nil maps and slices like empty ones.
var equate = cmpopts.EquateEmpty()

// update runs fn in one read-write transaction and fails the test if it
// returns an error. fn must return errors rather than fail the test itself,
// so that the transaction always ends.
func update(t *testing.T, s *graph.Store, fn func(ctx context.Context, tx *graph.Tx) error) {
	t.Helper()
	if err := tryUpdate(t, s, fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// tryUpdate runs fn in one read-write transaction and returns its error.
func tryUpdate(t *testing.T, s *graph.Store, fn func(ctx context.Context, tx *graph.Tx) error) error {
	ctx := t.Context()
	return s.Update(ctx, func(tx *graph.Tx) error { return fn(ctx, tx) })
}

// view runs fn in one read-only transaction and returns its result, failing
// the test on error.
func view[T any](t *testing.T, s *graph.Store, fn func(ctx context.Context, tx *graph.Tx) (T, error)) T {
	t.Helper()
	var out T
	err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	if err != nil {
		t.Fatalf("view: %v", err)
	}
	return out
}

// tryView runs fn in one read-only transaction and returns its error.
func tryView(t *testing.T, s *graph.Store, fn func(ctx context.Context, tx *graph.Tx) error) error {
	ctx := t.Context()
	return s.View(ctx, func(tx *graph.Tx) error { return fn(ctx, tx) })
}

// page is a page of a listing with the total the method reported.
type page[T any] struct {
	Rows  []T
	Total int
}

// listed wraps a listing method's results for view.
func listed[T any](rows []T, total int, err error) (page[T], error) {
	return page[T]{Rows: rows, Total: total}, err
}

// epoch is the suite's reference time: every test builds its timestamps
// from it, so that runs are reproducible.
var epoch = time.Date(2025, time.March, 14, 9, 26, 53, 589793000, time.UTC)

// at returns base plus n seconds: explicit, ordered timestamps.
func at(base time.Time, n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// newEntity returns an entity of user with every field set, last observed at
// last.
func newEntity(user, id, typ string, last time.Time) graph.Entity {
	return graph.Entity{
		ID: id, UserID: user, Type: typ, CanonicalName: "name of " + id, SchemaVersion: "1.0",
		Snapshot:         map[string]any{"name": "name of " + id},
		Provenance:       map[string]string{"name": "obs_" + id},
		ObservationCount: 1, LastObservationAt: last, CreatedAt: last, ComputedAt: last,
	}
}

// putEntities stores entities in one transaction.
// plainEntity is an entity of the random-graph tests (Reach, Expand,
// RelationshipsOfEntities): named by its id, with no snapshot, observed and
// created at at.
func plainEntity(user, id, typ string, at time.Time) graph.Entity {
	return graph.Entity{
		ID: id, UserID: user, Type: typ, CanonicalName: id, SchemaVersion: "1",
		LastObservationAt: at, CreatedAt: at, ComputedAt: at,
	}
}

// plainRelationship is a relationship of those tests, from src to dst,
// created at created and ended at ended (zero: live).
func plainRelationship(user, typ, src, dst string, created, ended time.Time) graph.Relationship {
	return graph.Relationship{
		ID: graph.RelationshipID(typ, src, dst), UserID: user, Type: typ,
		SourceEntityID: src, TargetEntityID: dst, CreatedAt: created, LastObservationAt: created, EndedAt: ended,
	}
}

func putEntities(t *testing.T, s *graph.Store, es ...graph.Entity) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		for _, e := range es {
			if err := tx.PutEntity(ctx, e); err != nil {
				return fmt.Errorf("put entity %s: %w", e.ID, err)
			}
		}
		return nil
	})
}

// newSource returns a source of user with every field set.
func newSource(user, id string, created time.Time) graph.Source {
	return graph.Source{
		ID: id, UserID: user, ContentHash: fmt.Sprintf("%x", sha256.Sum256([]byte(user+"/"+id))),
		Kind: graph.SourceStructured, MimeType: "application/json", OriginalFilename: id + ".json",
		Size: 1234, Provenance: map[string]any{"agent": "test", "n": 7}, CreatedAt: created,
	}
}

// putSources stores sources in one transaction.
func putSources(t *testing.T, s *graph.Store, srcs ...graph.Source) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		for _, src := range srcs {
			if err := tx.InsertSource(ctx, src); err != nil {
				return fmt.Errorf("insert source %s: %w", src.ID, err)
			}
		}
		return nil
	})
}

// node is an entity of a test graph.
type node struct{ id, typ string }

// link is an edge of a test graph, created at a fixed time so that graphs
// built in different insertion orders are identical.
type link struct {
	typ, src, dst string
	at            time.Time
}

// buildGraph stores the nodes as entities and creates the links in order
// through CreateRelationship, each in its own transaction. It returns the
// relationships created, by id.
func buildGraph(t *testing.T, s *graph.Store, user string, nodes []node, links []link) map[string]graph.Relationship {
	t.Helper()
	es := make([]graph.Entity, len(nodes))
	for i, n := range nodes {
		es[i] = newEntity(user, n.id, n.typ, epoch)
	}
	putEntities(t, s, es...)
	rels := map[string]graph.Relationship{}
	for _, l := range links {
		rels[l.relID()] = createLink(t, s, user, l)
	}
	return rels
}

// createLink creates l through CreateRelationship and fails the test unless
// it is new.
func createLink(t *testing.T, s *graph.Store, user string, l link) graph.Relationship {
	t.Helper()
	var rel graph.Relationship
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		r, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{
			UserID: user, Type: l.typ, SourceEntityID: l.src, TargetEntityID: l.dst, Now: l.at,
		})
		if err == nil && !created {
			err = errors.New("not created")
		}
		if err != nil {
			return fmt.Errorf("create %s -%s-> %s: %w", l.src, l.typ, l.dst, err)
		}
		rel = r
		return nil
	})
	return rel
}

// endLink ends the live period of l at time end.
func endLink(t *testing.T, s *graph.Store, user string, l link, end time.Time) graph.Relationship {
	t.Helper()
	var rel graph.Relationship
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		var err error
		rel, err = tx.EndRelationship(ctx, user, l.relID(), end)
		return err
	})
	return rel
}

// relID is the id of the link.
func (l link) relID() string { return graph.RelationshipID(l.typ, l.src, l.dst) }

// jsonValue returns v as a driver gives it back: encoded to JSON and decoded
// with numbers kept as json.Number.
func jsonValue[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out T
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out
}

// wantNotFound fails the test unless err wraps ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, graph.ErrNotFound) {
		t.Errorf("%s: err = %v, want one wrapping graph.ErrNotFound", what, err)
	}
}

// wantNotFoundError fails the test unless err is a *graph.NotFoundError
// naming id and wraps ErrNotFound.
func wantNotFoundError(t *testing.T, what string, err error, id string) {
	t.Helper()
	wantNotFound(t, what, err)
	var nf *graph.NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("%s: err = %v, want a *graph.NotFoundError", what, err)
		return
	}
	if nf.ID != id {
		t.Errorf("%s: NotFoundError.ID = %q, want %q", what, nf.ID, id)
	}
}

// diff reports a difference between got and want under the suite's
// equalities.
func diff(t *testing.T, what string, want, got any, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, append([]cmp.Option{equate}, opts...)...); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// diffString returns the difference between want and got under the suite's
// equalities, for use where the test cannot fail at once.
func diffString(want, got any) string { return cmp.Diff(want, got, equate) }
