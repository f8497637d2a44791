package neo4j

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// levelRunner answers reach_level as its statement says, from outbound
// adjacency lists: each entity one hop from $frontier that is not in $seen,
// with the lowest frontier id it is reached from, by id. Every other
// statement gets the rows queued in fakeRunner.
type levelRunner struct {
	fakeRunner
	out map[string][]string
}

func (l *levelRunner) run(ctx context.Context, name, query string, params map[string]any) ([]map[string]any, error) {
	if name != "reach_level" {
		return l.fakeRunner.run(ctx, name, query, params)
	}
	l.ran = append(l.ran, ran{name, query, params})
	seen := params["seen"].([]string)
	parent := map[string]string{}
	for _, f := range params["frontier"].([]string) {
		for _, n := range l.out[f] {
			if slices.Contains(seen, n) {
				continue
			}
			if p, ok := parent[n]; !ok || f < p {
				parent[n] = f
			}
		}
	}
	var rows []map[string]any
	for n, p := range parent {
		rows = append(rows, map[string]any{"id": n, "parent": p})
	}
	slices.SortFunc(rows, func(a, b map[string]any) int { return strings.Compare(a["id"].(string), b["id"].(string)) })
	return rows, nil
}

// TestReachRebuildsTheSamePath checks the Go half of Reach: among shortest
// paths it unwinds the one whose every step comes from the lowest-id entity
// of the previous level, as Tx.ShortestPath does, and it stops at the level
// that reaches the target.
func TestReachRebuildsTheSamePath(t *testing.T) {
	l := &levelRunner{out: map[string][]string{
		"a": {"c", "b"}, "b": {"e"}, "c": {"d", "e"}, "d": {"z"}, "e": {"z"},
	}}
	l.reply("entity_total", map[string]any{"total": int64(6)})
	// Neo4j's own choice among the shortest paths is not the one, and
	// reach_canonical says so (c is a better predecessor of d… of e).
	l.reply("reach_hops_directed", map[string]any{"hops": int64(3), "path": []any{"a", "b", "e", "z"}})
	l.reply("reach_canonical", map[string]any{"closer": int64(1)})
	got, err := (&tx{r: l}).Reach(t.Context(), graph.PathQuery{UserID: "alice", From: "a", To: "z", Direction: graph.Outbound})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "c", "d", "z"}, got); d != "" {
		t.Errorf("path (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"entity_total", "reach_hops_directed", "reach_canonical", "reach_level", "reach_level", "reach_level"}, l.names()); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
	hops := l.last(t, "reach_hops_directed")
	if hops.params["from"] != "a" || hops.params["to"] != "z" {
		t.Errorf("reach_hops_directed params %v", hops.params)
	}
}

// TestReachInboundSwapsEnds checks that an inbound query asks the directed
// statement from the other end, and bounds the pattern by the entities.
func TestReachInboundSwapsEnds(t *testing.T) {
	f := (&fakeRunner{}).reply("entity_total", map[string]any{"total": int64(7)})
	got, err := (&tx{r: f}).Reach(t.Context(), graph.PathQuery{UserID: "alice", From: "a", To: "b", Direction: graph.Inbound})
	if err != nil || got != nil {
		t.Fatalf("Reach = %v, %v; want no path", got, err)
	}
	r := f.last(t, "reach_hops_directed")
	if r.params["from"] != "b" || r.params["to"] != "a" {
		t.Errorf("inbound reach asked from %v to %v, want from b to a", r.params["from"], r.params["to"])
	}
	if !strings.Contains(r.query, "*1..8]") {
		t.Errorf("the pattern is not bounded by the user's entities less one, rounded up to a power of two:\n%s", r.query)
	}
}

// TestReachKeepsACanonicalPath checks that when reach_canonical finds no
// better predecessor along Neo4j's path, Reach returns that path without a
// breadth-first search, in the direction of the query: an inbound path is
// found from the other end and reversed, and checked as reversed.
func TestReachKeepsACanonicalPath(t *testing.T) {
	for _, tc := range []struct {
		name      string
		direction graph.Direction
		found     []any
		want      []string
	}{
		{"Outbound", graph.Outbound, []any{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"Inbound", graph.Inbound, []any{"c", "b", "a"}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&fakeRunner{}).reply("entity_total", map[string]any{"total": int64(3)})
			f.reply("reach_hops_directed", map[string]any{"hops": int64(2), "path": tc.found})
			f.reply("reach_canonical", map[string]any{"closer": int64(0)})
			got, err := (&tx{r: f}).Reach(t.Context(), graph.PathQuery{UserID: "alice", From: "a", To: "c", Direction: tc.direction})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("path (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"entity_total", "reach_hops_directed", "reach_canonical"}, f.names()); d != "" {
				t.Errorf("statements (-want +got):\n%s", d)
			}
			c := f.last(t, "reach_canonical")
			if d := cmp.Diff(tc.want, c.params["path"]); d != "" || c.params["reversed"] != (tc.direction == graph.Inbound) {
				t.Errorf("reach_canonical params %v", c.params)
			}
		})
	}
}
