package graphtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// testBulkRelationships checks the bulk methods that a batch of
// relationships is written with: each does what its one-row counterpart
// does for every row it is given, at any size; and Tx.CreateRelationships
// answers as CreateRelationship one after the other.
func testBulkRelationships(t *testing.T, newStore Harness) {
	t.Run("PutRelationships", func(t *testing.T) {
		s := newStore(t)
		const ents = 30
		var es []graph.Entity
		for i := range ents {
			es = append(es, newEntity(alice, fmt.Sprintf("ent_alice_%02d", i), []string{"person", "org"}[i%2], epoch))
		}
		es = append(es, newEntity(bob, "ent_bob_1", "person", epoch))
		putEntities(t, s, es...)
		// bulkSize relationships: every ordered pair of distinct entities,
		// of two types, until there are enough.
		var rs []graph.Relationship
		for n := 0; len(rs) < bulkSize; n++ {
			src, dst, typ := n%ents, (n/ents)%ents, []string{graph.RefersTo, graph.DependsOn}[n/(ents*ents)]
			if src == dst {
				continue
			}
			r := newRelationship(alice, typ, fmt.Sprintf("ent_alice_%02d", src), fmt.Sprintf("ent_alice_%02d", dst), at(epoch, n))
			r.Metadata = map[string]any{"n": n, "tags": []any{"a", n}}
			r.Provenance = map[string]string{"n": fmt.Sprint("robs_", n)}
			r.ObservationCount = n % 3
			rs = append(rs, r)
		}
		// The first relationship also has an ended period before, which
		// the bulk write replaces, and the second an ended one after.
		before, after := rs[0], rs[1]
		before.CreatedAt, before.EndedAt = at(epoch, -10), at(epoch, -5)
		after.CreatedAt, after.LastObservationAt, after.EndedAt = at(epoch, 5000), at(epoch, 5000), at(epoch, 5001)
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			for _, r := range []graph.Relationship{before, rs[0], after} {
				if err := tx.PutRelationship(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		rs[0].Metadata = map[string]any{"replaced": true}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.PutRelationships(ctx, nil); err != nil {
				return fmt.Errorf("put no relationships: %w", err)
			}
			return tx.PutRelationships(ctx, rs)
		})
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
		}
		want := jsonValue(t, rs)
		want[1] = jsonValue(t, after)
		asked := append([]string{"rel_missing", ids[7]}, ids...)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Relationship, error) {
			return tx.Relationships(ctx, alice, asked)
		})
		// In the order asked, each once at its first place, missing ids
		// left out, the newest period of each.
		seventh := want[7]
		want = append([]graph.Relationship{seventh}, slices.Delete(want, 7, 8)...)
		diff(t, "Relationships after PutRelationships", want, got)
		for i, id := range []string{ids[2], ids[len(ids)-1]} {
			one, err := relationship(t, s, alice, id)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, fmt.Sprint("Relationship ", i), jsonValue(t, rs[slices.Index(ids, id)]), one)
		}
		if n := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Relationship, error) {
			return tx.Relationships(ctx, bob, ids)
		}); len(n) != 0 {
			t.Errorf("bob reads %d of alice's relationships", len(n))
		}
		// A live edge written in bulk is an edge: Edges and the degrees see
		// it with its endpoints' types.
		edges := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Edge, error) {
			return tx.Edges(ctx, graph.EdgeQuery{UserID: alice, EntityIDs: []string{"ent_alice_03"}, Direction: graph.Outbound, Types: []string{graph.DependsOn}})
		})
		if len(edges) == 0 || edges[0].SourceType != "org" {
			t.Errorf("Edges of ent_alice_03 = %+v, want DEPENDS_ON edges from an org", edges)
		}

		for _, tc := range []struct {
			name string
			r    graph.Relationship
		}{
			{"MissingEndpoint", newRelationship(alice, graph.RefersTo, "ent_alice_01", "ent_alice_missing", epoch)},
			{"OtherUsersEndpoint", newRelationship(alice, graph.RefersTo, "ent_alice_01", "ent_bob_1", epoch)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
					return tx.PutRelationships(ctx, []graph.Relationship{rs[3], tc.r})
				})
				wantNotFound(t, "PutRelationships", err)
			})
		}
	})

	t.Run("RelationshipObservations", func(t *testing.T) {
		s := newStore(t)
		const src = "src_alice_1"
		putSources(t, s, newSource(alice, src, epoch), newSource(bob, "src_bob_1", epoch))
		rels := []string{"rel_alice_a", "rel_alice_b", "rel_alice_c"}
		var obs []graph.RelationshipObservation
		for i := range bulkSize {
			obs = append(obs, graph.RelationshipObservation{
				ID: fmt.Sprintf("robs_alice_%04d", i), UserID: alice, RelationshipID: rels[i%3], SourceID: src,
				ObservedAt: at(epoch, i), CreatedAt: at(epoch, i+1), SpecificityScore: 0.25, SourcePriority: i % 7,
				Metadata: map[string]any{"n": i},
			})
		}
		bobs := graph.RelationshipObservation{ID: "robs_bob_1", UserID: bob, RelationshipID: rels[0], SourceID: "src_bob_1", ObservedAt: epoch, CreatedAt: epoch}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.InsertRelationshipObservations(ctx, nil); err != nil {
				return fmt.Errorf("insert no observations: %w", err)
			}
			if err := tx.InsertRelationshipObservations(ctx, []graph.RelationshipObservation{bobs}); err != nil {
				return err
			}
			return tx.InsertRelationshipObservations(ctx, obs)
		})
		want := jsonValue(t, obs)
		byID := func(a, b graph.RelationshipObservation) int { return cmp.Compare(a.ID, b.ID) }
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
			return tx.RelationshipsObservations(ctx, alice, []string{rels[0], rels[2], "rel_alice_missing"})
		})
		slices.SortFunc(got, byID)
		var wantAC []graph.RelationshipObservation
		for _, o := range want {
			if o.RelationshipID != rels[1] {
				wantAC = append(wantAC, o)
			}
		}
		diff(t, "RelationshipsObservations", wantAC, got)
		// RelationshipObservations of one agrees with the bulk insert.
		one := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
			return tx.RelationshipObservations(ctx, alice, rels[1])
		})
		if len(one) != bulkSize/3 {
			t.Errorf("RelationshipObservations(%s) = %d, want %d", rels[1], len(one), bulkSize/3)
		}
		if n := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
			return tx.RelationshipsObservations(ctx, bob, rels)
		}); len(n) != 1 || n[0].ID != bobs.ID {
			t.Errorf("bob reads %v, want only his own", n)
		}
		// RelationshipObservationsBySource: a source's, by id, of its user.
		bySource := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
			return tx.RelationshipObservationsBySource(ctx, alice, src)
		})
		diff(t, "RelationshipObservationsBySource", want, bySource)
		for _, tc := range []struct{ user, source, want string }{{bob, "src_bob_1", bobs.ID}, {alice, "src_bob_1", ""}, {bob, src, ""}, {alice, "src_alice_missing", ""}} {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
				return tx.RelationshipObservationsBySource(ctx, tc.user, tc.source)
			})
			if (tc.want == "" && len(got) != 0) || (tc.want != "" && (len(got) != 1 || got[0].ID != tc.want)) {
				t.Errorf("RelationshipObservationsBySource(%s, %s) = %v, want %q", tc.user, tc.source, got, tc.want)
			}
		}
		fresh := func(id string) graph.RelationshipObservation {
			o := obs[0]
			o.ID = id
			return o
		}
		for _, tc := range []struct {
			name string
			obs  []graph.RelationshipObservation
		}{
			{"ExistingID", []graph.RelationshipObservation{fresh("robs_alice_new"), obs[7]}},
			{"RepeatedID", []graph.RelationshipObservation{fresh("robs_alice_twice"), fresh("robs_alice_twice")}},
			{"InsertedOneByOne", []graph.RelationshipObservation{obs[bulkSize-1]}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRelationshipObservations(ctx, tc.obs) })
				if !errors.Is(err, graph.ErrConflict) {
					t.Errorf("InsertRelationshipObservations: err = %v, want graph.ErrConflict", err)
				}
			})
		}
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRelationshipObservation(ctx, obs[5]) })
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertRelationshipObservation of an id InsertRelationshipObservations stored: err = %v, want graph.ErrConflict", err)
		}
	})

	t.Run("EnsureSources", func(t *testing.T) {
		s := newStore(t)
		stored := newSource(alice, "src_alice_stored", epoch)
		bobs := newSource(bob, "src_bob_1", epoch)
		putSources(t, s, stored, bobs)
		var given []graph.Source
		for i := range bulkSize {
			given = append(given, newSource(alice, fmt.Sprintf("src_alice_%04d", i), at(epoch, i)))
		}
		// The stored hash under another id: the stored source answers.
		again := newSource(alice, "src_alice_again", at(epoch, 9))
		again.ContentHash = stored.ContentHash
		// A hash given twice: the first is stored and answers for both.
		twice := newSource(alice, "src_alice_twice", at(epoch, 9))
		twice.ContentHash = given[3].ContentHash
		// Bob's hash, for alice: hers is new.
		bobsHash := newSource(alice, "src_alice_bobs_hash", at(epoch, 9))
		bobsHash.ContentHash = bobs.ContentHash
		srcs := append(slices.Clone(given), again, twice, bobsHash)
		var got []graph.Source
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if _, err := tx.EnsureSources(ctx, nil); err != nil {
				return fmt.Errorf("ensure no sources: %w", err)
			}
			var err error
			got, err = tx.EnsureSources(ctx, srcs)
			return err
		})
		want := jsonValue(t, append(slices.Clone(given), stored, given[3], bobsHash))
		diff(t, "EnsureSources", want, got)
		for _, src := range []graph.Source{given[0], given[bulkSize-1], bobsHash} {
			read := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
				return tx.SourceByHash(ctx, alice, src.ContentHash)
			})
			diff(t, "SourceByHash of "+src.ID, jsonValue(t, src), read)
		}
		if err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Source(ctx, alice, twice.ID)
			return err
		}); !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("the second source of a hash given twice: err = %v, want it not stored", err)
		}
		// Ensured again: nothing new, the same answers.
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			var err error
			got, err = tx.EnsureSources(ctx, srcs)
			return err
		})
		diff(t, "EnsureSources again", want, got)

		taken := newSource(alice, given[5].ID, epoch) // given[5]'s id, another hash
		taken.ContentHash = "another hash"
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.EnsureSources(ctx, []graph.Source{newSource(alice, "src_alice_fine", epoch), taken})
			return err
		})
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("EnsureSources of a taken id with another hash: err = %v, want graph.ErrConflict", err)
		}
	})

	t.Run("CreateRelationshipsMatchesOneByOne", func(t *testing.T) {
		testCreateRelationshipsMatchesOneByOne(t, newStore)
	})

	t.Run("PrepareRelationships", func(t *testing.T) {
		// Prepare answers what CreateRelationships answers, stores the
		// acyclic ones and leaves the others to the caller.
		s := newStore(t)
		putEntities(t, s, newEntity(alice, "ent_alice_p1", "person", epoch), newEntity(alice, "ent_alice_p2", "org", epoch))
		in := func(typ string) graph.NewRelationship {
			return graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: "ent_alice_p1", TargetEntityID: "ent_alice_p2", Now: at(epoch, 5)}
		}
		var made []graph.CreatedRelationship
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			var err error
			made, err = tx.PrepareRelationships(ctx, []graph.NewRelationship{in(graph.RefersTo), in(graph.PartOf)})
			if err != nil {
				return err
			}
			if len(made) != 2 || !made[0].Created || !made[1].Created || made[0].Err != nil || made[1].Err != nil {
				return fmt.Errorf("prepared %+v", made)
			}
			if _, err := tx.Relationship(ctx, alice, made[0].Relationship.ID); !errors.Is(err, graph.ErrNotFound) {
				return fmt.Errorf("the REFERS_TO one before the caller writes it: %v, want not found", err)
			}
			if _, err := tx.Relationship(ctx, alice, made[1].Relationship.ID); err != nil {
				return fmt.Errorf("the PART_OF one: %v, want it stored", err)
			}
			return tx.PutRelationships(ctx, []graph.Relationship{made[0].Relationship})
		})
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Relationship, error) {
			return tx.Relationship(ctx, alice, made[0].Relationship.ID)
		})
		diff(t, "the REFERS_TO one once written", jsonValue(t, made[0].Relationship), got)
	})
}

// newRelationship returns a live relationship of user created at created.
func newRelationship(user, typ, src, dst string, created time.Time) graph.Relationship {
	return graph.Relationship{
		ID: graph.RelationshipID(typ, src, dst), UserID: user, Type: typ, SourceEntityID: src, TargetEntityID: dst,
		Metadata: map[string]any{}, Provenance: map[string]string{}, CreatedAt: created, LastObservationAt: created,
	}
}

// testCreateRelationshipsMatchesOneByOne is Tx.CreateRelationships's oracle:
// on two stores seeded alike, the same requests through CreateRelationship
// one after the other in one transaction, and through CreateRelationships,
// give the same outcome for each and leave the same relationships. The
// requests mix acyclic and other types, repeat relationships (existing
// ones, ones made earlier in the call, one reached through a merged
// endpoint), renew ended ones (one whose new period must start after a
// later last start), and have missing, other users' and merged endpoints,
// malformed types, self-loops and cycles closed within the call.
func testCreateRelationshipsMatchesOneByOne(t *testing.T, newStore Harness) {
	const a, b, c, d, e, dup = "ent_alice_a", "ent_alice_b", "ent_alice_c", "ent_alice_d", "ent_alice_e", "ent_alice_dup"
	now := at(epoch, 100)
	seed := func(t *testing.T) *graph.Store {
		s := newStore(t)
		merged := newEntity(alice, dup, "person", epoch)
		merged.MergedInto, merged.MergedAt = d, epoch
		putEntities(t, s, newEntity(alice, a, "person", epoch), newEntity(alice, b, "org", epoch),
			newEntity(alice, c, "person", epoch), newEntity(alice, d, "org", epoch), newEntity(alice, e, "person", epoch),
			merged, newEntity(bob, "ent_bob_1", "person", epoch))
		for _, l := range []link{
			{graph.RefersTo, a, b, at(epoch, 1)}, {graph.DependsOn, a, b, at(epoch, 2)},
			{graph.RefersTo, c, d, at(epoch, 3)}, {graph.RefersTo, e, a, at(epoch, 200)},
		} {
			createLink(t, s, alice, l)
		}
		endLink(t, s, alice, link{graph.RefersTo, c, d, at(epoch, 3)}, at(epoch, 50))
		endLink(t, s, alice, link{graph.RefersTo, e, a, at(epoch, 200)}, at(epoch, 300))
		return s
	}
	in := func(typ, src, dst string) graph.NewRelationship {
		return graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: src, TargetEntityID: dst, Now: now}
	}
	likes := func(src, dst string) graph.NewRelationship {
		r := in("LIKES", src, dst)
		r.Acyclic = true
		return r
	}
	ins := []graph.NewRelationship{
		in(graph.RefersTo, a, b),             // existing
		in(graph.RefersTo, b, c),             // new
		in(graph.RefersTo, b, c),             // made earlier in the call
		in(graph.DependsOn, b, a),            // closes a → b → a
		in(graph.PartOf, b, c),               // acyclic, new
		in(graph.PartOf, c, b),               // closes b → c → b within the call
		in(graph.RefersTo, c, d),             // renews an ended one
		in(graph.RefersTo, c, d),             // renewed earlier in the call
		in(graph.RefersTo, e, a),             // renews one that began after now
		in(graph.RefersTo, a, "ent_alice_x"), // missing target
		in(graph.RefersTo, "ent_bob_1", a),   // another user's source
		in(graph.RefersTo, dup, a),           // merged source: lands on d
		in(graph.RefersTo, d, a),             // the same edge, named directly
		in("not a type", a, b),               // malformed
		in(graph.Settles, a, a),              // a self-loop of a type that allows it
		in(graph.Supersedes, c, c),           // a self-loop of one that does not
		likes(a, b), likes(b, a),             // a registered acyclic type
		in(graph.RefersTo, b, a), // new, after all that
	}
	oneByOne, batch := seed(t), seed(t)
	type outcome struct {
		Rel     graph.Relationship
		Created bool
		Err     string
	}
	var want, got []outcome
	update(t, oneByOne, func(ctx context.Context, tx *graph.Tx) error {
		want = nil
		for _, r := range ins {
			rel, created, err := tx.CreateRelationship(ctx, r)
			o := outcome{Rel: rel, Created: created}
			if err != nil {
				o.Err = err.Error()
			}
			want = append(want, o)
		}
		return nil
	})
	update(t, batch, func(ctx context.Context, tx *graph.Tx) error {
		out, err := tx.CreateRelationships(ctx, ins)
		if err != nil {
			return err
		}
		got = nil
		for _, r := range out {
			o := outcome{Rel: r.Relationship, Created: r.Created}
			if r.Err != nil {
				o.Err = r.Err.Error()
			}
			got = append(got, o)
		}
		return nil
	})
	for i := range ins {
		if d := diffString(jsonValue(t, want[i]), jsonValue(t, got[i])); d != "" {
			t.Errorf("request %d (%s %s → %s): CreateRelationships differs from one by one (-one by one +batch):\n%s",
				i, ins[i].Type, ins[i].SourceEntityID, ins[i].TargetEntityID, d)
		}
	}
	// Spot checks, so that the oracle cannot agree on nonsense.
	if !got[1].Created || got[2].Created || !got[6].Created || got[7].Created || got[0].Created {
		t.Errorf("created = %v %v %v %v %v, want existing, new, existing, renewed, existing",
			got[0].Created, got[1].Created, got[2].Created, got[6].Created, got[7].Created)
	}
	if !got[8].Rel.CreatedAt.After(at(epoch, 200)) || got[11].Rel.SourceEntityID != d || got[12].Created || got[5].Err == "" {
		t.Errorf("renewal at %v, merged source on %s, repeat created %v, cycle %q", got[8].Rel.CreatedAt, got[11].Rel.SourceEntityID, got[12].Created, got[5].Err)
	}
	all := func(s *graph.Store) []graph.Relationship {
		return view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Relationship, error) {
			rels, _, err := tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: alice, At: at(epoch, 1000), Page: graph.Page{Limit: 100}})
			return rels, err
		})
	}
	diff(t, "relationships after the call (one by one, batch)", all(oneByOne), all(batch))
}
