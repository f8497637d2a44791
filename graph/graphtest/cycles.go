package graphtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// acyclicTypes are the built-in types whose edges may never form a cycle.
func acyclicTypes() []string {
	return []string{graph.PartOf, graph.DependsOn, graph.Supersedes, graph.Corrects}
}

// wantCycle fails the test unless err is a *graph.CycleError of type typ
// with path, that also matches graph.ErrCycle.
func wantCycle(t *testing.T, what string, err error, typ string, path []string) {
	t.Helper()
	if !errors.Is(err, graph.ErrCycle) {
		t.Errorf("%s: err = %v, want one wrapping graph.ErrCycle", what, err)
	}
	var cycle *graph.CycleError
	if !errors.As(err, &cycle) {
		t.Errorf("%s: err = %v, want a *graph.CycleError", what, err)
		return
	}
	if cycle.RelationshipType != typ {
		t.Errorf("%s: CycleError.RelationshipType = %q, want %q", what, cycle.RelationshipType, typ)
	}
	diff(t, what+": CycleError.Path", path, cycle.Path)
	diff(t, what+": CycleError.Cycle()", append([]string{path[len(path)-1]}, path...), cycle.Cycle())
}

func testCycles(t *testing.T, newStore Harness) {
	s := newStore(t)
	// Each subtest has its own entities: ent_alice_<prefix>_<name>.
	var nodes []node
	prefixes := []string{"self", "pair", "ring", "ended"}
	types := append(acyclicTypes(), graph.RefersTo, graph.Settles, graph.DuplicateOf, "MENTORS", "per_type")
	for _, typ := range types {
		for _, p := range prefixes {
			for _, n := range []string{"a", "b", "c"} {
				nodes = append(nodes, node{"ent_alice_" + typ + "_" + p + "_" + n, "thing"})
			}
		}
	}
	buildGraph(t, s, alice, nodes, nil)
	id := func(typ, prefix, n string) string { return "ent_alice_" + typ + "_" + prefix + "_" + n }
	// try creates src → dst of typ and returns the error.
	try := func(t *testing.T, typ, src, dst string) error {
		t.Helper()
		_, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: src, TargetEntityID: dst})
		return err
	}
	mustCreate := func(t *testing.T, typ, src, dst string) {
		t.Helper()
		if err := try(t, typ, src, dst); err != nil {
			t.Fatalf("create %s -%s-> %s: %v", src, typ, dst, err)
		}
	}
	wantAbsent := func(t *testing.T, typ, src, dst string) {
		t.Helper()
		if _, err := relationship(t, s, alice, graph.RelationshipID(typ, src, dst)); !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("refused edge %s -%s-> %s: Relationship err = %v, want graph.ErrNotFound", src, typ, dst, err)
		}
	}

	for _, typ := range acyclicTypes() {
		t.Run(typ, func(t *testing.T) {
			a := func(p string) string { return id(typ, p, "a") }
			b := func(p string) string { return id(typ, p, "b") }
			c := func(p string) string { return id(typ, p, "c") }

			err := try(t, typ, a("self"), a("self"))
			wantCycle(t, "self-loop", err, typ, []string{a("self")})
			wantAbsent(t, typ, a("self"), a("self"))

			mustCreate(t, typ, a("pair"), b("pair"))
			err = try(t, typ, b("pair"), a("pair"))
			wantCycle(t, "A→B then B→A", err, typ, []string{a("pair"), b("pair")})
			wantAbsent(t, typ, b("pair"), a("pair"))

			mustCreate(t, typ, a("ring"), b("ring"))
			mustCreate(t, typ, b("ring"), c("ring"))
			err = try(t, typ, c("ring"), a("ring"))
			wantCycle(t, "A→B→C then C→A", err, typ, []string{a("ring"), b("ring"), c("ring")})
			wantAbsent(t, typ, c("ring"), a("ring"))

			// An ended edge does not count; once the reverse edge is live,
			// the ended one cannot come back.
			mustCreate(t, typ, a("ended"), b("ended"))
			endLink(t, s, alice, link{typ: typ, src: a("ended"), dst: b("ended")}, time.Time{})
			mustCreate(t, typ, b("ended"), a("ended"))
			err = try(t, typ, a("ended"), b("ended"))
			wantCycle(t, "ended A→B, live B→A, then A→B again", err, typ, []string{b("ended"), a("ended")})
		})
	}

	for _, typ := range []string{graph.RefersTo, graph.Settles, graph.DuplicateOf, "MENTORS"} {
		t.Run("Allowed"+typ, func(t *testing.T) {
			for _, e := range [][2]string{
				{id(typ, "self", "a"), id(typ, "self", "a")},
				{id(typ, "pair", "a"), id(typ, "pair", "b")},
				{id(typ, "pair", "b"), id(typ, "pair", "a")},
				{id(typ, "ring", "a"), id(typ, "ring", "b")},
				{id(typ, "ring", "b"), id(typ, "ring", "c")},
				{id(typ, "ring", "c"), id(typ, "ring", "a")},
			} {
				mustCreate(t, typ, e[0], e[1])
			}
		})
	}

	t.Run("PerType", func(t *testing.T) {
		a, b, c := id("per_type", "ring", "a"), id("per_type", "ring", "b"), id("per_type", "ring", "c")
		mustCreate(t, graph.PartOf, a, b)
		mustCreate(t, graph.DependsOn, b, a)
		mustCreate(t, graph.Supersedes, b, c)
		mustCreate(t, graph.Corrects, c, a)
		mustCreate(t, graph.PartOf, b, c)
		err := try(t, graph.PartOf, c, a)
		wantCycle(t, "PART_OF ring over edges of other types", err, graph.PartOf, []string{a, b, c})
	})
}

// findCycle returns a cycle of the directed graph adj (node → successors),
// source first and last, or nil when it is acyclic. It is the suite's own
// check, independent of the code under test.
func findCycle(adj map[string][]string) []string {
	const (
		unseen = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onStack
		stack = append(stack, n)
		for _, m := range adj[n] {
			switch state[m] {
			case onStack:
				i := slices.Index(stack, m)
				return append(slices.Clone(stack[i:]), m)
			case unseen:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	keys := make([]string, 0, len(adj))
	for n := range adj {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	for _, n := range keys {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}
