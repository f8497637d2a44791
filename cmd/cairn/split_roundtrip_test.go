package main

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/mcp"
)

// TestExportImportAcrossBackends moves a store with history through the
// command line, embedded → split deployment (Neo4j and PostgreSQL) →
// embedded, with cairn export and cairn import, and checks that the three
// stores answer the tools alike: snapshots now and as of every moment
// between two writes, the provenance of every field, observations,
// relationships now and as of those moments (one ended and was created
// again), relationship snapshots, timelines and memories. The three
// exports are the same too, but for the time each was made.
func TestExportImportAcrossBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	neo4jtest.SkipUnlessConfigured(t)
	// The lexical embedder everywhere: memories keep their exported
	// vectors (--vectors) only on a target of the same embedder.
	const embedder = "CAIRN_EMBED_PROVIDER=local"
	embeddedEnv := []string{"CAIRN_DATABASE_URL=", embedder}
	splitVars := append(splitEnv(t), embedder)
	dirs := t.TempDir()
	source, split, back := filepath.Join(dirs, "source"), filepath.Join(dirs, "split"), filepath.Join(dirs, "back")
	files := t.TempDir()
	first, second, third := filepath.Join(files, "first.jsonl"), filepath.Join(files, "second.jsonl"), filepath.Join(files, "third.jsonl")

	cs := connectStdio(t, source, embeddedEnv...)
	data := buildRoundTripData(t, cs)
	want := roundTripReads(t, cs, data)
	cs.Close()
	checkAsOfMatters(t, want, data)

	cairnWithEnv(t, embeddedEnv, "export", "--data-dir", source, "--vectors", "--out", first)
	cairnWithEnv(t, splitVars, "import", "--data-dir", split, first)
	cairnWithEnv(t, splitVars, "export", "--data-dir", split, "--vectors", "--out", second)
	cs = connectStdio(t, split, splitVars...)
	if d := cmp.Diff(want, roundTripReads(t, cs, data), sameAnswer); d != "" {
		t.Errorf("the split deployment answers otherwise than the embedded source (-source +split):\n%s", d)
	}
	cs.Close()
	if _, err := os.Stat(split); err == nil {
		t.Errorf("the split deployment wrote to the data directory %s", split)
	}

	cairnWithEnv(t, embeddedEnv, "import", "--data-dir", back, second)
	cairnWithEnv(t, embeddedEnv, "export", "--data-dir", back, "--vectors", "--out", third)
	cs = connectStdio(t, back, embeddedEnv...)
	if d := cmp.Diff(want, roundTripReads(t, cs, data), sameAnswer); d != "" {
		t.Errorf("the embedded store imported back answers otherwise than the source (-source +back):\n%s", d)
	}
	cs.Close()

	for _, f := range []struct{ name, path string }{{"split", second}, {"back", third}} {
		if d := cmp.Diff(exportLines(t, first), exportLines(t, f.path)); d != "" {
			t.Errorf("the export of the %s store differs from the source's (-source +%s):\n%s", f.name, f.name, d)
		}
	}
}

// sameAnswer compares two answers of a tool. Meta's ExecutionMS is how
// long the call took and RequestID is made afresh for each call: neither
// is data. (As-of snapshots lose their read time in roundTripReads.)
var sameAnswer = cmp.Options{cmpopts.IgnoreFields(mcp.Meta{}, "ExecutionMS", "RequestID"),
	// The unexported createdAt (for the v0 aliases' records) is not on
	// the wire: zero on both sides of an answer decoded from a call.
	cmp.AllowUnexported(mcp.SnapshotOut{}, mcp.EntityOut{})}

// cairnWithEnv runs the binary with env added to the test's environment and
// fails the test if it fails.
func cairnWithEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// roundTripData names what buildRoundTripData wrote.
type roundTripData struct {
	// ids are entity ids by name, the merged one included.
	ids map[string]string
	// relationships are the keys of every relationship.
	relationships []mcp.RelationshipKeyIn
	collections   []string
	// moments are times worth reading the store as of: one between
	// each write and the next.
	moments []string
}

// buildRoundTripData stores, through the tools: companies and people from
// three sources that disagree (one with a higher priority, one with a
// field no schema names, dates that make timeline events), a correction,
// a merge, relationships (one ended, then created again with other
// metadata), and memories linked to entities. After each write it notes
// the time: the server wrote with the same clock before it answered, and
// writes the next after this, so the time lies between the two.
func buildRoundTripData(t *testing.T, cs *mcpsdk.ClientSession) roundTripData {
	t.Helper()
	d := roundTripData{ids: map[string]string{}, collections: []string{"notes", "insights"}}
	write := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		out := callTool(t, cs, tool, args)
		d.moments = append(d.moments, time.Now().UTC().Format(time.RFC3339Nano))
		return out
	}
	store := func(args map[string]any) {
		t.Helper()
		out := write("store", args)
		ents := args["entities"].([]any)
		for i, e := range out["entities"].([]any) {
			d.ids[ents[i].(map[string]any)["name"].(string)] = e.(map[string]any)["entity_id"].(string)
		}
	}
	store(map[string]any{"provenance": map[string]any{"agent_id": "crawler"}, "entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils", "employees": 3, "founded_date": "1999-04-01", "address": "1 Mesa Road"},
		map[string]any{"entity_type": "person", "name": "Wile E", "title": "customer", "company": "Acme", "birth_date": "1949-09-17"},
	}})
	store(map[string]any{"source_priority": 500, "provenance": map[string]any{"agent_id": "registry"}, "entities": []any{
		map[string]any{"entity_type": "company", "name": "ACME", "industry": "rockets", "employees": 40, "mascot": "coyote"},
		map[string]any{"entity_type": "person", "name": "Road Runner", "title": "runner", "company": "Acme"},
	}})
	store(map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": "Wile E", "title": "super genius"},
		map[string]any{"entity_type": "company", "name": "Acme Corporation", "industry": "mail order"},
	}})
	if d.ids["ACME"] != d.ids["Acme"] {
		t.Fatalf("Acme and ACME are two entities: %v", d.ids)
	}
	delete(d.ids, "ACME")
	write("correct", map[string]any{"entity_id": d.ids["Acme"], "entity_type": "company", "field": "employees", "value": 42})
	write("merge_entities", map[string]any{"from_entity_id": d.ids["Acme Corporation"], "to_entity_id": d.ids["Acme"], "merge_reason": "the same company"})

	relate := func(typ, from, to string, meta map[string]any) {
		t.Helper()
		write("create_relationship", map[string]any{"relationship_type": typ, "source_entity_id": d.ids[from], "target_entity_id": d.ids[to], "metadata": meta})
	}
	relate("PART_OF", "Wile E", "Acme", map[string]any{"role": "customer"})
	relate("REFERS_TO", "Road Runner", "Wile E", map[string]any{"how": "meep meep"})
	write("delete_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": d.ids["Wile E"], "target_entity_id": d.ids["Acme"]})
	relate("PART_OF", "Wile E", "Acme", map[string]any{"role": "supplier"})
	d.relationships = []mcp.RelationshipKeyIn{
		{RelationshipType: "PART_OF", SourceEntityID: d.ids["Wile E"], TargetEntityID: d.ids["Acme"]},
		{RelationshipType: "REFERS_TO", SourceEntityID: d.ids["Road Runner"], TargetEntityID: d.ids["Wile E"]},
	}

	for _, m := range []map[string]any{
		{"collection": "notes", "text": "Wile E keeps buying rockets from Acme", "tags": []string{"purchases"}, "entity_ids": []string{d.ids["Wile E"], d.ids["Acme"]}},
		{"collection": "notes", "title": "speed", "text": "The road runner is faster than any rocket", "tags": []string{"speed", "birds"}, "confidence": 0.8},
		{"collection": "insights", "text": "Acme ships anvils by mail", "metadata": map[string]any{"checked": true}},
	} {
		write("save_memory", m)
	}
	// The last time follows the last write: no write comes after it.
	d.moments = d.moments[:len(d.moments)-1]
	return d
}

// toolRead is one answer of a tool: its result and meta, or the code of
// its error.
type toolRead[T any] struct {
	Result    T
	Meta      mcp.Meta
	ErrorCode string
}

// readTool calls a tool that reads and decodes its answer; an error is
// part of the answer (an entity does not exist as of a moment before it
// was first observed, say).
func readTool[T any](t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) toolRead[T] {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out toolRead[T]
	if res.IsError {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &env); err != nil || env.Error.Code == "" {
			t.Fatalf("%s: an error without its envelope: %v", name, res.Content[0])
		}
		out.ErrorCode = env.Error.Code
		return out
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Meta mcp.Meta `json:"meta"`
	}
	if err := json.Unmarshal(b, &out.Result); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out.Meta = meta.Meta
	return out
}

// roundTripReads is what the tools answer about d, now and as of each
// moment, keyed by what was asked.
func roundTripReads(t *testing.T, cs *mcpsdk.ClientSession, d roundTripData) map[string]any {
	t.Helper()
	out := map[string]any{}
	for name, id := range d.ids {
		snap := readTool[mcp.SnapshotOut](t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
		out["snapshot "+name] = snap
		for _, field := range slices.Sorted(maps.Keys(snap.Result.Snapshot)) {
			out["provenance "+name+"."+field] = readTool[mcp.FieldProvenanceOut](t, cs, "retrieve_field_provenance", map[string]any{"entity_id": id, "field": field})
		}
		out["observations "+name] = readTool[mcp.ObservationsOut](t, cs, "list_observations", map[string]any{"entity_id": id, "limit": 1000})
		out["timeline "+name] = readTool[mcp.TimelineOut](t, cs, "list_timeline_events", map[string]any{"entity_id": id, "limit": 1000})
		out["relationships "+name] = readTool[mcp.ListRelationshipsOut](t, cs, "list_relationships", map[string]any{"entity_id": id, "limit": 1000})
		for _, at := range d.moments {
			asOf := readTool[mcp.SnapshotOut](t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id, "at": at})
			// An as-of snapshot is reduced when it is read: its
			// computed_at is the time of the read, and meta.bytes
			// counts that time's text, whose length varies (RFC 3339
			// drops trailing zeros of the fraction).
			asOf.Result.ComputedAt, asOf.Meta.Bytes = "", 0
			out["snapshot "+name+" at "+at] = asOf
			out["relationships "+name+" at "+at] = readTool[mcp.ListRelationshipsOut](t, cs, "list_relationships", map[string]any{"entity_id": id, "at": at, "limit": 1000})
		}
	}
	for _, k := range d.relationships {
		out["relationship "+k.RelationshipType+" "+k.SourceEntityID+" "+k.TargetEntityID] = readTool[mcp.RelationshipSnapshotOut](t, cs, "get_relationship_snapshot",
			map[string]any{"relationship_type": k.RelationshipType, "source_entity_id": k.SourceEntityID, "target_entity_id": k.TargetEntityID})
	}
	for _, c := range d.collections {
		// A listing (no query), oldest first: a search's ranking by words
		// is each memory backend's own.
		out["memories "+c] = readTool[mcp.SearchMemoryOut](t, cs, "search_memory", map[string]any{"collection": c, "query": "", "sort": "created_at", "order": "asc", "limit": 100})
	}
	return out
}

// checkAsOfMatters fails the test unless the source's as-of answers differ
// from its present ones where the data says they must: Acme's industry
// before the later sources (the last write wins), its employees corrected,
// and Wile E's first PART_OF while it lived.
func checkAsOfMatters(t *testing.T, reads map[string]any, d roundTripData) {
	t.Helper()
	var anvils, customer bool
	for _, at := range d.moments {
		snap := reads["snapshot Acme at "+at].(toolRead[mcp.SnapshotOut])
		anvils = anvils || snap.Result.Snapshot["industry"] == "anvils"
		rels := reads["relationships Wile E at "+at].(toolRead[mcp.ListRelationshipsOut])
		for _, r := range rels.Result.Relationships {
			customer = customer || r.RelationshipType == "PART_OF" && r.Metadata["role"] == "customer"
		}
	}
	now := reads["snapshot Acme"].(toolRead[mcp.SnapshotOut]).Result.Snapshot
	if !anvils || now["industry"] == "anvils" || now["employees"] != float64(42) {
		t.Errorf("Acme is %v now (want the corrected employees, 42, and an industry other than anvils), and an as-of snapshot has industry anvils: %v; the data set does not test as-of reads", now, anvils)
	}
	if !customer {
		t.Errorf("no as-of read of Wile E's relationships has the ended PART_OF (role customer): the data set does not test ended relationships")
	}
	if merged := reads["snapshot Acme Corporation"].(toolRead[mcp.SnapshotOut]); merged.ErrorCode == "" {
		t.Errorf("the merged entity's snapshot answered %+v, want an error naming the merge", merged.Result)
	}
}

// exportLines are the lines of an export, the header without the time the
// export was made and the end line without the checksum, which covers the
// header (import checks the checksum).
func exportLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("%s is empty", path)
	}
	var header map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &header); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	data, ok := header["data"].(map[string]any)
	if !ok || data["exported_at"] == nil {
		t.Fatalf("%s: the header has no exported_at: %s", path, lines[0])
	}
	delete(data, "exported_at")
	b, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	lines[0] = string(b)
	var end map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &end); err != nil || end["kind"] != "end" {
		t.Fatalf("%s: the last line is not the end line (%v): %s", path, err, lines[len(lines)-1])
	}
	if data, ok := end["data"].(map[string]any); !ok || data["sha256"] == nil {
		t.Fatalf("%s: the end line has no checksum: %s", path, lines[len(lines)-1])
	} else {
		delete(data, "sha256")
	}
	if b, err = json.Marshal(end); err != nil {
		t.Fatal(err)
	}
	lines[len(lines)-1] = string(b)
	return lines
}
