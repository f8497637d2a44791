package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector"
)

// storeOne stores one entity and returns its id.
func storeOne(t *testing.T, e *env, ent map[string]any) string {
	t.Helper()
	out := e.mustCall(t, "store", map[string]any{"entities": []any{ent}})
	return out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
}

// TestEraseEntityLeavesNoTrace is the proof of issue 37 for entities: a
// marker planted in an entity's fields, its unknown (raw) fields, its
// identifiers and a relationship's metadata is, once the entity is erased,
// in no byte of the SQLite files (after the store's own compaction) and in
// no row of any PostgreSQL table; entity search finds it by neither
// keyword nor meaning; contexts, relationship listings, traversals and
// MCP resources (its own read as not found) do not show it; a new export
// holds none of it; the audit log records the erasure.
func TestEraseEntityLeavesNoTrace(t *testing.T) {
	// The split deployment's graph is in Neo4j: its nodes and
	// relationships are searched for the marker too.
	var n4j *neo4jtest.Server
	split := storeBackend{"Neo4j", func(t testing.TB) backendStores {
		n4j = neo4jtest.Take(t)
		return onPostgres(t, func(*postgres.DB) graph.Driver { return graphneo4j.New(n4j.Driver, n4j.Config.Database) })
	}}
	for _, b := range []storeBackend{embeddedBackend, postgresBackend, split} {
		t.Run(b.name, func(t *testing.T) {
			n4j = nil
			e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
			holdsMarker := func(t *testing.T, e *env, marker string) bool {
				t.Helper()
				return holdsMarker(t, e, marker) || n4j != nil && neo4jHolds(t, n4j, marker)
			}
			ctx := t.Context()
			marker := "zqe" + strings.TrimPrefix(vector.NewID(), "mem_")[:12] + "q"
			stored := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{
				"entity_type": "person", "name": "Ann " + marker, "email": marker + "@example.org",
				"notes": "told in confidence " + marker, "birth_date": "1980-02-03", "nickname": marker,
			}}, "provenance": map[string]any{"note": marker}})
			ann := stored["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
			acme := storeOne(t, e, map[string]any{"entity_type": "company", "name": "Acme Tools"})
			bob := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Bob Stone"})
			e.mustCall(t, "create_relationship", map[string]any{
				"relationship_type": "WORKS_AT", "source_entity_id": ann, "target_entity_id": acme, "metadata": map[string]any{"note": marker},
			})
			found := func(query string, meaning bool) []string {
				t.Helper()
				out := e.mustCall(t, "retrieve_entities", map[string]any{"query": query, "meaning": meaning})
				var ids []string
				for _, r := range out["entities"].([]any) {
					ids = append(ids, r.(map[string]any)["id"].(string))
				}
				return ids
			}
			if ids := found(marker, false); len(ids) != 1 || ids[0] != ann {
				t.Fatalf("before the erasure the marker finds %v, want [%s]", ids, ann)
			}
			cs := e.connect(t)
			views := erasedEntityViews{id: ann, marker: marker, related: acme,
				own:   []string{"cairn://entity/" + ann, "cairn://entity/" + ann + "/observations", "cairn://entity/" + ann + "/relationships", "cairn://source/" + stored["source_id"].(string)},
				lists: []string{"cairn://entities/person", "cairn://entity/" + acme + "/relationships", "cairn://timeline/1980", "cairn://timeline/1980-02"},
			}
			views.check(t, e, cs, false)
			if err := e.stores.memories.Compact(ctx); err != nil {
				t.Fatalf("compact: %v", err)
			}
			if !holdsMarker(t, e, marker) {
				t.Fatal("the store does not hold the marker before the erasure: the search below proves nothing")
			}

			dry := e.mustCall(t, "erase", map[string]any{"kind": "entity", "ids": []string{ann}, "dry_run": true})
			if !holdsMarker(t, e, marker) || dry["dry_run"] != true {
				t.Fatalf("a dry run erased: %v", dry)
			}
			out := e.mustCall(t, "erase", map[string]any{"kind": "entity", "ids": []string{ann}, "reason": "data-protection request"})
			c := out["counts"].(map[string]any)
			for kind, want := range map[string]float64{"entities": 1, "observations": 1, "raw_fragments": 1, "relationships": 1, "relationship_observations": 1} {
				if c[kind] != want {
					t.Errorf("counts[%s] = %v, want %v (%v)", kind, c[kind], want, c)
				}
			}
			if c["identifiers"].(float64) < 2 || c["timeline_events"] != 1.0 {
				t.Errorf("counts %v: want the name and email identifiers and the birthday", c)
			}
			if !mustJSONEq(dry["counts"], c) {
				t.Errorf("the dry run counted %v, the erasure %v", dry["counts"], c)
			}

			if holdsMarker(t, e, marker) {
				t.Error("the store still holds the marker after the erasure")
			}
			if ids := found(marker, false); len(ids) != 0 {
				t.Errorf("keyword search finds %v after the erasure", ids)
			}
			for _, id := range found("Ann told in confidence", true) {
				if id == ann {
					t.Error("search by meaning finds the erased entity")
				}
			}
			if _, merr := e.call(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann}); merr == nil || merr.Body.Code != "ENTITY_NOT_FOUND" {
				t.Errorf("the erased entity's snapshot: %v", merr)
			}
			views.check(t, e, cs, true)
			rels := e.mustCall(t, "list_relationships", map[string]any{"entity_id": acme})
			if s := mustJSON(t, rels); strings.Contains(s, ann) || strings.Contains(s, marker) {
				t.Errorf("list_relationships still shows the erased entity: %s", s)
			}
			ctxOut := e.mustCall(t, "get_user_context", map[string]any{"budget_tokens": 8000})
			delete(ctxOut, "meta")
			if s := mustJSON(t, ctxOut); strings.Contains(s, marker) || strings.Contains(s, ann) || !strings.Contains(s, bob) {
				t.Errorf("after the erasure get_user_context shows the entity or lost Bob: %s", s)
			}
			if ids := found("Bob Stone", false); len(ids) != 1 || ids[0] != bob {
				t.Errorf("the other person is found as %v", ids)
			}

			if bytes.Contains(newExport(t, e), []byte(marker)) {
				t.Error("a new export holds the marker")
			}
			recs, raw := auditRecords(t, e)
			if bytes.Contains(raw, []byte(marker)) {
				t.Error("the audit log holds the marker")
			}
			erased := false
			for _, r := range recs {
				erased = erased || (r.Tool == "erase" && r.Decision == consent.Allow)
			}
			if !erased {
				t.Errorf("the audit log does not record the erasure: %s", raw)
			}
			// Ann's tombstone, with the counts, and one of the source
			// her store made, which her erasure left with no observation.
			ts, err := e.control.GraphTombstones(ctx, e.owner.UserID)
			if err != nil || len(ts) != 2 || ts[0].ID != ann || ts[0].Reason != "data-protection request" || ts[0].ErasedAt.IsZero() ||
				ts[0].Counts["entities"] != 1 || ts[1].Kind != "source" || ts[1].Reason != ts[0].Reason || len(ts[1].Counts) != 0 {
				t.Errorf("tombstones = %+v, %v", ts, err)
			}
			if _, merr := e.call(t, "erase", map[string]any{"kind": "entity", "ids": []string{ann}}); merr == nil || merr.Body.Code != "ENTITY_NOT_FOUND" {
				t.Errorf("erasing again: %v", merr)
			}
		})
	}
}

// erasedEntityViews are the reads that show an entity before its
// erasure and must not after: its MCP resources, and a traversal from the
// other end of its relationship.
type erasedEntityViews struct {
	id, marker string
	// related is an entity at the other end of one of its relationships,
	// which outlives it: traversals start there.
	related string
	// own are the resources of the entity alone (itself, its
	// observations, the source that made it): after the erasure each
	// reads as not found.
	own []string
	// lists are resources that list it among others (its type's
	// collection, the other end's relationships, the timeline of its
	// birthday): after the erasure each still reads, without its id or
	// the marker.
	lists []string
}

// check reads every view as cs's caller, before (erased false) or after
// the erasure: before, each must show the entity, so that after, not
// showing it proves something.
func (v erasedEntityViews) check(t *testing.T, e *env, cs *mcpsdk.ClientSession, erased bool) {
	t.Helper()
	shows := func(s string) bool { return strings.Contains(s, v.id) || strings.Contains(s, v.marker) }
	for _, uri := range append(slices.Clone(v.own), v.lists...) {
		got, err := readResource(t, cs, uri)
		switch {
		case !erased && (err != nil || !strings.Contains(mustJSON(t, got), v.id)):
			t.Fatalf("before the erasure %s reads %v, %v; want it to show %s", uri, got, err, v.id)
		case erased && slices.Contains(v.own, uri) && (err == nil || !strings.Contains(strings.ToLower(err.Error()), "not found")):
			t.Errorf("after the erasure %s reads %v, %v; want not found", uri, got, err)
		case erased && slices.Contains(v.lists, uri) && (err != nil || shows(mustJSON(t, got))):
			t.Errorf("after the erasure %s reads %v, %v; want it without the entity", uri, got, err)
		}
	}
	// resources/list: the timeline of the birthday, the only event,
	// is listed before and not after; the people's collection stays
	// (another person) with its count one lower.
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, r := range res.Resources {
		listed[r.URI] = r.Title
	}
	if _, ok := listed["cairn://timeline/1980"]; ok == erased || listed["cairn://entities/person"] != map[bool]string{false: "person (2)", true: "person (1)"}[erased] ||
		shows(mustJSON(t, res)) {
		t.Errorf("resources/list (erased %v): %v", erased, listed)
	}
	// A traversal from the company reaches the entity only before.
	for _, tool := range []string{"retrieve_related_entities", "retrieve_graph_neighborhood"} {
		args := map[string]any{"entity_id": v.related, "max_hops": 2}
		if tool == "retrieve_graph_neighborhood" {
			args = map[string]any{"node_id": v.related, "node_type": "entity"}
		}
		if got := mustJSON(t, e.mustCall(t, tool, args)); shows(got) == erased {
			t.Errorf("%s from the other end (erased %v): %s", tool, erased, got)
		}
	}
}

// neo4jHolds reports whether a property of any node or relationship of the
// Neo4j database holds marker.
func neo4jHolds(t *testing.T, srv *neo4jtest.Server, marker string) bool {
	t.Helper()
	n, err := neo4jtest.Holds(t.Context(), srv.Driver, srv.Config.Database, marker)
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		t.Logf("Neo4j holds the marker in %d nodes or relationships", n)
	}
	return n > 0
}

// newExport returns a new export of every user of the env, with vectors,
// consent and audit.
func newExport(t *testing.T, e *env) []byte {
	t.Helper()
	users, err := e.control.ListUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if _, err := transfer.Export(t.Context(), transfer.Stores{Graph: e.stores.graph, Control: e.control, Memories: e.stores.memories}, &exp,
		transfer.ExportOptions{Users: users, Vectors: true, Audit: true, Consent: true}); err != nil {
		t.Fatal(err)
	}
	return exp.Bytes()
}

// auditRecords flushes the audit log and returns the owner's records, and
// their JSON.
func auditRecords(t *testing.T, e *env) ([]consent.AuditRecord, []byte) {
	t.Helper()
	if err := e.audit.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs, err := e.control.QueryAudit(t.Context(), consent.AuditQuery{UserID: e.owner.UserID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(recs)
	return recs, raw
}

// mustJSONEq reports whether a and b encode to the same JSON.
func mustJSONEq(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// TestRetractWinningObservation: retracting the observation a field's value
// came from makes the next one win, with provenance naming it; the
// retracted observation stays listed; undo makes it win again.
func TestRetractWinningObservation(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"})
	snap := func() map[string]any {
		t.Helper()
		return e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann})
	}
	first := snap()["provenance"].(map[string]any)["title"].(string)
	corr := e.mustCall(t, "correct", map[string]any{"entity_id": ann, "entity_type": "person", "field": "title", "value": "Surgeon"})
	corrID := corr["observation_id"].(string)
	if s := snap(); s["snapshot"].(map[string]any)["title"] != "Surgeon" {
		t.Fatalf("after the correction: %v", s)
	}
	before := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(2 * time.Millisecond) // the retraction is recorded strictly after before
	out := e.mustCall(t, "retract", map[string]any{"observation_ids": []string{corrID}, "reason": "wrong person"})
	if ids := out["observation_ids"].([]any); len(ids) != 1 || ids[0] != corrID || out["entities"].([]any)[0] != ann {
		t.Errorf("retract answered %v", out)
	}
	s := snap()
	if s["snapshot"].(map[string]any)["title"] != "Nurse" || s["provenance"].(map[string]any)["title"] != first {
		t.Errorf("after the retraction the title is %v from %v, want Nurse from %s", s["snapshot"].(map[string]any)["title"], s["provenance"], first)
	}
	if s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann, "at": before}); s["snapshot"].(map[string]any)["title"] != "Surgeon" {
		t.Errorf("as of before the retraction the title is %v, want Surgeon", s["snapshot"])
	}
	if obs := mustJSON(t, e.mustCall(t, "list_observations", map[string]any{"entity_id": ann})); !strings.Contains(obs, corrID) {
		t.Errorf("the retracted observation is no longer listed: %s", obs)
	}
	if again := e.mustCall(t, "retract", map[string]any{"observation_ids": []string{corrID}}); len(again["observation_ids"].([]any)) != 0 {
		t.Errorf("retracting again changed %v", again)
	}
	rs, err := e.control.Retractions(t.Context(), e.owner.UserID, []string{corrID})
	if err != nil || len(rs) != 1 || rs[0].Reason != "wrong person" || rs[0].Actor == "" || rs[0].SubjectID != ann {
		t.Errorf("retraction record %+v, %v", rs, err)
	}
	e.mustCall(t, "retract", map[string]any{"observation_ids": []string{corrID}, "undo": true})
	if s := snap(); s["snapshot"].(map[string]any)["title"] != "Surgeon" || s["provenance"].(map[string]any)["title"] != corrID {
		t.Errorf("after undo: %v", s)
	}
	if _, merr := e.call(t, "retract", map[string]any{"observation_ids": []string{"obs_nope"}}); merr == nil || merr.Body.Code != "NOT_FOUND" {
		t.Errorf("retracting an unknown observation: %v", merr)
	}
}

// TestEraseMergedAndSource: erasing a duplicate merged into another entity
// takes its observations out of the survivor, which is computed again;
// erasing a source recomputes the entities it contributed to and erases
// those it alone made.
func TestEraseMergedAndSource(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"})
	dup := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann B. Lee", "email": "ann@example.org", "phone": "555-0100"})
	e.mustCall(t, "merge_entities", map[string]any{"from_entity_id": dup, "to_entity_id": ann})
	if s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann}); s["snapshot"].(map[string]any)["email"] != "ann@example.org" {
		t.Fatalf("the merge did not bring the email: %v", s)
	}
	out := e.mustCall(t, "erase", map[string]any{"kind": "entity", "ids": []string{dup}})
	if r := out["recomputed"].([]any); len(r) != 1 || r[0] != ann {
		t.Errorf("erase answered %v, want %s recomputed", out, ann)
	}
	s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann})
	snap := s["snapshot"].(map[string]any)
	if snap["email"] != nil || snap["phone"] != nil || snap["title"] != "Nurse" || snap["name"] != "Ann Lee" {
		t.Errorf("the survivor after erasing its duplicate: %v", snap)
	}
	if r := e.mustCall(t, "retrieve_entity_by_identifier", map[string]any{"identifier": "ann@example.org"}); strings.Contains(mustJSON(t, r), ann) {
		t.Errorf("the survivor is still found by the erased duplicate's email: %v", r)
	}

	// One source makes Cy and adds a field to Ann; Cy goes, Ann loses it.
	st := e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": "Cy Young"},
		map[string]any{"entity_type": "person", "name": "Ann Lee", "company": "Acme"},
	}})
	src := st["source_id"].(string)
	cy := st["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	mem := e.mustCall(t, "save_memory", map[string]any{"collection": "notes", "text": "Cy joined Acme", "source_id": src})
	out = e.mustCall(t, "erase", map[string]any{"kind": "source", "ids": []string{src}})
	if ents, rec := out["entities"].([]any), out["recomputed"].([]any); len(ents) != 1 || ents[0] != cy || len(rec) != 1 || rec[0] != ann {
		t.Errorf("erasing the source answered %v", out)
	}
	if c := out["counts"].(map[string]any); c["sources"] != 1.0 || c["observations"] != 2.0 || c["memories"] != 1.0 {
		t.Errorf("counts %v", c)
	}
	if s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann}); s["snapshot"].(map[string]any)["company"] != nil {
		t.Errorf("Ann keeps the erased source's company: %v", s)
	}
	if _, merr := e.call(t, "retrieve_entity_snapshot", map[string]any{"entity_id": cy}); merr == nil {
		t.Error("the entity only the erased source made is still there")
	}
	if ts, err := e.stores.memories.Tombstones(t.Context(), e.owner.UserID, []string{mem["id"].(string)}); err != nil || len(ts) != 1 {
		t.Errorf("the memory naming the erased source: tombstones %v, %v", ts, err)
	}
}

// TestEraseConsent: write is not delete; an entity the caller may not read
// is answered as one that does not exist; a delete rule lets the caller
// erase and retract.
func TestEraseConsent(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"})
	writer, _ := e.agent(t, e.owner.UserID, "writer", [3]string{"read", "entities/*", "allow"}, [3]string{"write", "entities/*", "allow"})
	stranger, _ := e.agent(t, e.owner.UserID, "stranger", [3]string{"delete", "entities/*", "allow"})
	deleter, _ := e.agent(t, e.owner.UserID, "deleter", [3]string{"read", "entities/person", "allow"}, [3]string{"delete", "entities/person", "allow"})
	if _, merr := e.callAs(t, writer, "erase", map[string]any{"kind": "entity", "ids": []string{ann}}); merr == nil ||
		merr.Body.Code != mcp.CodeConsentDenied || merr.Body.Details["action"] != "delete" {
		t.Errorf("erase without a delete rule: %v, want %s for delete", merr, mcp.CodeConsentDenied)
	}
	_, unreadable := e.callAs(t, stranger, "erase", map[string]any{"kind": "entity", "ids": []string{ann}})
	_, absent := e.callAs(t, stranger, "erase", map[string]any{"kind": "entity", "ids": []string{"ent_nope"}})
	if unreadable == nil || absent == nil || unreadable.Body.Code != absent.Body.Code ||
		strings.ReplaceAll(unreadable.Body.Message, ann, "ID") != strings.ReplaceAll(absent.Body.Message, "ent_nope", "ID") {
		t.Errorf("erase of an unreadable entity %v, of a missing one %v: want the same answer", unreadable, absent)
	}
	snap := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann})
	obs := snap["provenance"].(map[string]any)["title"].(string)
	if _, merr := e.callAs(t, writer, "retract", map[string]any{"observation_ids": []string{obs}}); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
		t.Errorf("retract without a delete rule: %v", merr)
	}
	if _, merr := e.callAs(t, deleter, "retract", map[string]any{"observation_ids": []string{obs}}); merr != nil {
		t.Errorf("retract with a delete rule: %v", merr)
	}
	if _, merr := e.callAs(t, deleter, "erase", map[string]any{"kind": "entity", "ids": []string{ann}}); merr != nil {
		t.Errorf("erase with a delete rule: %v", merr)
	}
}

// TestRetractRelationshipObservation: retracting the observation a
// relationship's metadata came from makes the earlier one win; undo
// brings it back; a later create keeps the retracted one out.
func TestRetractRelationshipObservation(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee"})
	acme := storeOne(t, e, map[string]any{"entity_type": "company", "name": "Acme Tools"})
	key := map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": ann, "target_entity_id": acme}
	with := func(meta map[string]any) map[string]any {
		m := map[string]any{"metadata": meta}
		for k, v := range key {
			m[k] = v
		}
		return m
	}
	e.mustCall(t, "create_relationship", with(map[string]any{"role": "clerk"}))
	e.mustCall(t, "create_relationship", with(map[string]any{"role": "manager"}))
	snap := func() (string, map[string]any) {
		t.Helper()
		out := e.mustCall(t, "get_relationship_snapshot", key)
		s := out["snapshot"].(map[string]any)
		return s["id"].(string), s
	}
	relID, s := snap()
	if s["snapshot"].(map[string]any)["role"] != "manager" {
		t.Fatalf("before: %v", s)
	}
	winner := s["provenance"].(map[string]any)["role"].(string)
	out := e.mustCall(t, "retract", map[string]any{"relationship_id": relID, "relationship_observation_ids": []string{winner}, "reason": "never promoted"})
	if r, _ := out["relationships"].([]any); len(r) != 1 || r[0] != relID {
		t.Errorf("retract answered %v", out)
	}
	if _, s := snap(); s["snapshot"].(map[string]any)["role"] != "clerk" {
		t.Errorf("after the retraction: %v", s)
	}
	e.mustCall(t, "create_relationship", with(map[string]any{"since": 2020}))
	if _, s := snap(); s["snapshot"].(map[string]any)["role"] != "clerk" {
		t.Errorf("a later create counts the retracted observation again: %v", s)
	}
	e.mustCall(t, "retract", map[string]any{"relationship_id": relID, "relationship_observation_ids": []string{winner}, "undo": true})
	if _, s := snap(); s["snapshot"].(map[string]any)["role"] != "manager" {
		t.Errorf("after undo: %v", s)
	}
}

// TestEraseClosesContradictions: a contradiction between two observations
// of an entity holds both values; erasing the entity removes it from
// review.
func TestEraseClosesContradictions(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"})
	e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Surgeon"}},
		"source_priority": 10})
	if review := mustJSON(t, e.mustCall(t, "review_memories", map[string]any{"action": "list"})); !strings.Contains(review, ann) {
		t.Fatalf("no contradiction to review: %s", review)
	}
	out := e.mustCall(t, "erase", map[string]any{"kind": "entity", "ids": []string{ann}})
	if c := out["counts"].(map[string]any); c["contradictions"] != 1.0 {
		t.Errorf("counts %v, want 1 contradiction", c)
	}
	if review := mustJSON(t, e.mustCall(t, "review_memories", map[string]any{"action": "list"})); strings.Contains(review, ann) || strings.Contains(review, "Surgeon") {
		t.Errorf("review still shows the erased entity's contradiction: %s", review)
	}
}

// TestEraseSourceCountsOnlyWhatTheCallerSees is
// TestEraseCountsOnlyWhatTheCallerSees for sources. Erasing the source
// that alone made a person linked to a company and to an invoice, an
// agent that may not read invoices is told of the one relationship it can
// see, never of the one to the invoice; without read on the graph, of
// none; the owner, of both. A source of a relationship (create_relationship
// records one) is what it said about that edge: one the agent may see it
// erases, and is told of; one to an invoice is, to the agent that may not
// read invoices, a source that does not exist, and so is any, to an agent
// that may not read the graph.
func TestEraseSourceCountsOnlyWhatTheCallerSees(t *testing.T) {
	for _, b := range []storeBackend{embeddedBackend, postgresBackend} {
		t.Run(b.name, func(t *testing.T) {
			e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
			round := 0
			sourceOf := func(rel map[string]any) string {
				t.Helper()
				var src string
				err := e.stores.graph.View(t.Context(), func(tx *graph.Tx) error {
					robs, err := tx.RelationshipObservations(t.Context(), e.owner.UserID, rel["id"].(string))
					if err == nil && len(robs) == 1 {
						src = robs[0].SourceID
					}
					return err
				})
				if err != nil || src == "" {
					t.Fatalf("the source of relationship %v: %q, %v", rel["id"], src, err)
				}
				return src
			}
			// world stores, for a new round, the person a source alone
			// made, linked to a company and an invoice, and the sources
			// of a relationship from another person to the company and of
			// one from the invoice to that person.
			world := func() (made, visible, hidden string) {
				t.Helper()
				round++ // new entities each round: a dry run leaves the last ones
				st := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": fmt.Sprint("Ann Lee ", round)}}})
				ann := st["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
				bo := storeOne(t, e, map[string]any{"entity_type": "person", "name": fmt.Sprint("Bo Chen ", round)})
				acme := storeOne(t, e, map[string]any{"entity_type": "company", "name": fmt.Sprint("Acme ", round)})
				inv := storeOne(t, e, map[string]any{"entity_type": "invoice", "invoice_number": fmt.Sprint("INV-", round), "vendor_name": "Acme"})
				rel := func(from, to string) map[string]any {
					return e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": from, "target_entity_id": to})
				}
				rel(ann, acme)
				rel(inv, ann)
				return st["source_id"].(string), sourceOf(rel(bo, acme)), sourceOf(rel(inv, bo))
			}
			narrow, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/*", "allow"}, [3]string{"read", "entities/invoice", "deny"},
				[3]string{"read", "graph", "allow"}, [3]string{"delete", "entities/*", "allow"})
			blind, _ := e.agent(t, e.owner.UserID, "blind", [3]string{"read", "entities/*", "allow"}, [3]string{"delete", "entities/*", "allow"})
			erase := func(who consent.Principal, src string, dryRun bool) (map[string]any, *mcp.Error) {
				t.Helper()
				out, merr := e.callAs(t, who, "erase", map[string]any{"kind": "source", "ids": []string{src}, "dry_run": dryRun})
				if merr != nil {
					return nil, merr
				}
				return out["counts"].(map[string]any), nil
			}
			for _, tc := range []struct {
				who consent.Principal
				// rels and robs are what the source that made the person
				// counts; edge, what the visible edge's source counts (0:
				// SOURCE_NOT_FOUND); hidden, whether the invoice edge's
				// source is SOURCE_NOT_FOUND.
				rels, robs, edge float64
				hidden           bool
			}{{narrow, 1, 1, 1, true}, {blind, 0, 0, 0, true}, {e.owner, 2, 2, 1, false}} {
				for _, dry := range []bool{true, false} {
					made, visible, hidden := world()
					// Both at once, as a dry run: each part counted as alone.
					out, merr := e.callAs(t, tc.who, "erase", map[string]any{"kind": "source", "ids": []string{made, visible}, "dry_run": true})
					if tc.edge == 0 {
						if merr == nil || merr.Body.Code != "SOURCE_NOT_FOUND" {
							t.Errorf("%s erases two sources, one of an edge it may not read: %v, %v", tc.who.AgentName, out, merr)
						}
					} else if merr != nil {
						t.Errorf("%s erases two sources: %v", tc.who.AgentName, merr)
					} else if c := out["counts"].(map[string]any); c["relationships"] != tc.rels+tc.edge || c["relationship_observations"] != tc.robs+tc.edge {
						t.Errorf("%s erases two sources: counts %v, want %v relationships and %v observations", tc.who.AgentName, c, tc.rels+tc.edge, tc.robs+tc.edge)
					}
					c, merr := erase(tc.who, made, dry)
					if merr != nil {
						t.Fatalf("%s erases the source of a person: %v", tc.who.AgentName, merr)
					}
					if c["entities"] != 1.0 || c["relationships"] != tc.rels || c["relationship_observations"] != tc.robs {
						t.Errorf("%s (dry run %v) erases the source of a person: counts %v, want 1 entity, %v relationships and %v observations",
							tc.who.AgentName, dry, c, tc.rels, tc.robs)
					}
					c, merr = erase(tc.who, visible, dry)
					switch {
					case tc.edge == 0 && (merr == nil || merr.Body.Code != "SOURCE_NOT_FOUND"):
						t.Errorf("%s erases the source of an edge it may not read: %v, %v", tc.who.AgentName, c, merr)
					case tc.edge != 0 && merr != nil:
						t.Errorf("%s erases the source of an edge: %v", tc.who.AgentName, merr)
					case tc.edge != 0 && (c["relationships"] != tc.edge || c["relationship_observations"] != tc.edge || c["sources"] != 1.0 || c["entities"] != 0.0):
						t.Errorf("%s (dry run %v) erases the source of an edge: counts %v", tc.who.AgentName, dry, c)
					}
					c, merr = erase(tc.who, hidden, dry)
					_, absent := erase(tc.who, "src_nope", dry)
					if tc.hidden {
						if merr == nil || absent == nil || merr.Body.Code != absent.Body.Code ||
							strings.ReplaceAll(merr.Body.Message, hidden, "ID") != strings.ReplaceAll(absent.Body.Message, "src_nope", "ID") {
							t.Errorf("%s erases the source of an edge to an invoice: %v, %v; of a missing source: %v: want the same answer", tc.who.AgentName, c, merr, absent)
						}
					} else if merr != nil || c["relationships"] != 1.0 || c["relationship_observations"] != 1.0 {
						t.Errorf("%s erases the source of an edge to an invoice: %v, %v", tc.who.AgentName, c, merr)
					}
				}
			}
		})
	}
}

// TestEraseCountsOnlyWhatTheCallerSees: erasing a person linked to a
// company and to an invoice, an agent that may not read invoices is told
// of the one relationship it can see (and its observation), never of the
// one to the invoice; without read on the graph, of none; the owner, of
// both.
func TestEraseCountsOnlyWhatTheCallerSees(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	round := 0
	erase := func(who consent.Principal, dryRun bool) map[string]any {
		t.Helper()
		round++ // new entities each round: a dry run leaves the last ones
		ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": fmt.Sprint("Ann Lee ", round)})
		acme := storeOne(t, e, map[string]any{"entity_type": "company", "name": fmt.Sprint("Acme ", round)})
		inv := storeOne(t, e, map[string]any{"entity_type": "invoice", "invoice_number": fmt.Sprint("INV-", round), "vendor_name": "Acme"})
		e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": ann, "target_entity_id": acme})
		e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": inv, "target_entity_id": ann})
		out, merr := e.callAs(t, who, "erase", map[string]any{"kind": "entity", "ids": []string{ann}, "dry_run": dryRun})
		if merr != nil {
			t.Fatalf("erase as %s: %v", who.AgentName, merr)
		}
		return out["counts"].(map[string]any)
	}
	narrow, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/*", "allow"}, [3]string{"read", "entities/invoice", "deny"},
		[3]string{"read", "graph", "allow"}, [3]string{"delete", "entities/person", "allow"})
	blind, _ := e.agent(t, e.owner.UserID, "blind", [3]string{"read", "entities/*", "allow"}, [3]string{"delete", "entities/person", "allow"})
	for _, tc := range []struct {
		who        consent.Principal
		rels, robs float64
	}{{narrow, 1, 1}, {blind, 0, 0}, {e.owner, 2, 2}} {
		for _, dry := range []bool{true, false} {
			c := erase(tc.who, dry)
			if c["relationships"] != tc.rels || c["relationship_observations"] != tc.robs {
				t.Errorf("%s (dry run %v): counts %v, want %v relationships and %v observations", tc.who.AgentName, dry, c, tc.rels, tc.robs)
			}
		}
	}
}
