package vector_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// signalsDriver answers a search's reads with its two signals' functions;
// every other method of vector.Driver is left unimplemented.
type signalsDriver struct {
	vector.Driver
	space     vector.Space
	nearest   func(context.Context) ([]vector.Scored, error)
	matchText func(context.Context) ([]vector.Scored, error)
}

func (d *signalsDriver) Spaces(_ context.Context, _ string, collections []string) (map[string]vector.Space, error) {
	out := map[string]vector.Space{}
	for _, c := range collections {
		out[c] = d.space
	}
	return out, nil
}

func (d *signalsDriver) Nearest(ctx context.Context, _ vector.VectorQuery) ([]vector.Scored, error) {
	return d.nearest(ctx)
}

func (d *signalsDriver) MatchText(ctx context.Context, _ vector.TextQuery) ([]vector.Scored, error) {
	return d.matchText(ctx)
}

func (d *signalsDriver) Get(_ context.Context, userID string, ids []string) ([]vector.Memory, error) {
	var out []vector.Memory
	for _, id := range ids {
		out = append(out, vector.Memory{ID: id, UserID: userID, Collection: "c", Text: id})
	}
	return out, nil
}

func hybridQuery() vector.Query {
	return vector.Query{
		Filter: vector.Filter{UserID: "u", Collections: []string{"c"}},
		Text:   "green tea", Vector: []float32{1, 0}, Space: vector.Space{Embedder: "test", Dimension: 2}, Limit: 10,
	}
}

// TestHybridSearchRunsSignalsTogether: each signal waits until the other
// has started, which only a search that runs them at the same time lets
// happen; the answer fuses both.
func TestHybridSearchRunsSignalsTogether(t *testing.T) {
	vecStarted, textStarted := make(chan struct{}), make(chan struct{})
	waitFor := func(ctx context.Context, started chan struct{}, other <-chan struct{}, out []vector.Scored) ([]vector.Scored, error) {
		close(started)
		select {
		case <-other:
			return out, nil
		case <-time.After(10 * time.Second):
			return nil, errors.New("the other signal never started: the signals ran one after the other")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	d := &signalsDriver{
		space: vector.Space{Embedder: "test", Dimension: 2},
		nearest: func(ctx context.Context) ([]vector.Scored, error) {
			return waitFor(ctx, vecStarted, textStarted, []vector.Scored{{ID: "both", Score: 0.9}, {ID: "vec", Score: 0.8}})
		},
		matchText: func(ctx context.Context) ([]vector.Scored, error) {
			return waitFor(ctx, textStarted, vecStarted, []vector.Scored{{ID: "both", Score: 3}, {ID: "text", Score: 2}})
		},
	}
	res, err := vector.NewStore(d).Search(t.Context(), hybridQuery())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	if len(ids) != 3 || ids[0] != "both" || res.Total != 3 {
		t.Errorf("hits %v (total %d), want both first of 3", ids, res.Total)
	}
}

// TestHybridSearchFailsWithEitherSignal: a signal that fails fails the
// search with its error, and the other signal is cancelled rather than
// left running (or, had it not started, never run).
func TestHybridSearchFailsWithEitherSignal(t *testing.T) {
	boom := errors.New("boom")
	for _, failing := range []string{"vector", "text"} {
		t.Run(failing, func(t *testing.T) {
			cancelled := make(chan struct{})
			fail := func(context.Context) ([]vector.Scored, error) { return nil, boom }
			block := func(ctx context.Context) ([]vector.Scored, error) {
				select {
				case <-ctx.Done():
					close(cancelled)
					return nil, ctx.Err()
				case <-time.After(10 * time.Second):
					return nil, errors.New("not cancelled")
				}
			}
			d := &signalsDriver{space: vector.Space{Embedder: "test", Dimension: 2}, nearest: fail, matchText: block}
			if failing == "text" {
				d.nearest, d.matchText = block, fail
			}
			if _, err := vector.NewStore(d).Search(t.Context(), hybridQuery()); !errors.Is(err, boom) {
				t.Fatalf("search error %v, want the failing signal's", err)
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the other signal was not cancelled")
			}
		})
	}
}

// TestTextOnlySearchEmbedsNothing: a search by the text signal alone (an
// evaluation's BM25 mode) neither embeds its query nor runs the vector
// signal, so that its latency is the text signal's.
func TestTextOnlySearchEmbedsNothing(t *testing.T) {
	d := &signalsDriver{
		space: vector.Space{Embedder: "test", Dimension: 2},
		nearest: func(context.Context) ([]vector.Scored, error) {
			t.Error("the vector signal ran")
			return nil, nil
		},
		matchText: func(context.Context) ([]vector.Scored, error) {
			return []vector.Scored{{ID: "text", Score: 2}}, nil
		},
	}
	q := hybridQuery()
	q.Vector, q.Only = nil, vector.SignalText
	q.Embed = func(context.Context) ([]float32, error) {
		t.Error("the query was embedded")
		return []float32{1, 0}, nil
	}
	res, err := vector.NewStore(d).Search(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].ID != "text" {
		t.Errorf("hits %+v, want the text signal's", res.Hits)
	}
}
