package transfer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vecembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// clock is a test clock that moves one second at each reading.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// backend is one complete store and the knowledge and files services
// over it.
type backend struct {
	stores transfer.Stores
	svc    *knowledge.Service
	files  *files.Service
	// holds reports whether any row of the store (the embedded store: any
	// byte of its files) or any blob of its bucket holds a string.
	holds func(t *testing.T, s string) bool
}

// newBackend opens a file bucket for s and the services; the schema
// registry is the control plane's. holds reports whether the store's
// database holds a string.
func newBackend(t *testing.T, s transfer.Stores, clk *clock, holds func(*testing.T, string) bool) backend {
	t.Helper()
	bucket, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{NoTempDir: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	s.Bucket = bucket
	svc := knowledge.NewService(s.Graph, schema.NewPersistentRegistry(s.Control), knowledge.Options{
		Now: clk.now, Embedder: embed.NewLocal(), Memories: s.Memories,
		Profiles: s.Control, Contradictions: s.Control, GraphForget: s.Control, SourceTypes: files.SourceTypes(s.Control),
	})
	fsvc := files.New(files.Options{Bucket: bucket, Meta: s.Control, Jobs: s.Control, Knowledge: svc, SpoolDir: t.TempDir(), Now: clk.now})
	svc.SetFileEraser(fsvc.EraseFile)
	return backend{s, svc, fsvc, func(t *testing.T, str string) bool {
		t.Helper()
		return holds(t, str) || bucketHolds(t, bucket, str)
	}}
}

func openEmbedded(t *testing.T, clk *clock) backend {
	t.Helper()
	db := sqlitetest.Open(t)
	s := transfer.Stores{
		Graph: graph.NewStore(embedded.New(db)), Control: controlplane.New(db.Write, migrations.SQLite),
		Memories: vector.NewStore(vecembedded.New(db)),
	}
	t.Cleanup(func() { s.Graph.Close(); s.Memories.Close() })
	return newBackend(t, s, clk, func(t *testing.T, str string) bool { return sqliteHolds(t, db, str) })
}

func openPostgres(t *testing.T, clk *clock) backend {
	t.Helper()
	db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := transfer.Stores{
		Graph: graph.NewStore(graphpostgres.New(db.Pool)), Control: controlplane.New(db.SQL, migrations.Postgres),
		Memories: vector.NewStore(pgvector.New(db.Pool, pgvector.Options{})),
	}
	t.Cleanup(func() { s.Graph.Close(); s.Memories.Close(); db.Close() })
	return newBackend(t, s, clk, func(t *testing.T, str string) bool { return postgresHolds(t, db, str) })
}

// generate fills b with every kind of record for user u, through the
// knowledge service, and returns the entity ids by name and moments worth
// reading the graph as of.
func generate(t *testing.T, b backend, clk *clock, u consent.User) (map[string]string, []time.Time) {
	t.Helper()
	ctx := t.Context()
	c := knowledge.Caller{UserID: u.ID, AgentID: "claude"}
	ids := map[string]string{}
	var moments []time.Time
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	store := func(agent string, es ...map[string]any) {
		t.Helper()
		res, err := b.svc.Store(ctx, c, knowledge.StoreRequest{Entities: es, Provenance: map[string]any{"agent_id": agent}})
		check("store", err)
		for i, e := range res.Entities {
			ids[es[i]["name"].(string)] = e.EntityID
		}
		moments = append(moments, clk.t)
	}
	// Several sources that disagree; unknown fields go to raw fragments;
	// date fields give timeline events.
	store("s1",
		map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils", "employees": json.Number("3"), "founded_date": "1999-04-01", "mascot": "coyote"},
		map[string]any{"entity_type": "person", "name": "Wile E", "birth_date": "1949-09-17", "company": "Acme"},
		map[string]any{"entity_type": "company", "name": "Acme Corp", "industry": "rockets"},
	)
	store("s2", map[string]any{"entity_type": "company", "name": "Acme", "industry": "rockets", "employees": json.Number("40")})
	store("s3", map[string]any{"entity_type": "person", "name": "Road Runner", "title": "runner", "speed": json.Number("99.5")})
	// A correction and a merge.
	_, err := b.svc.Correct(ctx, c, knowledge.CorrectRequest{EntityID: ids["Acme"], EntityType: "company", Field: "employees", Value: json.Number("42")})
	check("correct", err)
	moments = append(moments, clk.t)
	_, err = b.svc.MergeEntities(ctx, c, ids["Acme Corp"], ids["Acme"], "same company")
	check("merge", err)
	moments = append(moments, clk.t)
	// Relationships created, ended and created again.
	rel := knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: ids["Wile E"], TargetEntityID: ids["Acme"], Metadata: map[string]any{"role": "customer"}}
	_, _, err = b.svc.CreateRelationship(ctx, c, rel)
	check("create relationship", err)
	_, _, err = b.svc.CreateRelationship(ctx, c, knowledge.RelationshipRequest{Type: graph.RefersTo, SourceEntityID: ids["Road Runner"], TargetEntityID: ids["Wile E"]})
	check("create relationship", err)
	// A type of the user's own, registered by its first use.
	_, _, err = b.svc.CreateRelationship(ctx, c, knowledge.RelationshipRequest{Type: "CHASES", SourceEntityID: ids["Wile E"], TargetEntityID: ids["Road Runner"]})
	check("create relationship of a new type", err)
	moments = append(moments, clk.t)
	_, err = b.svc.DeleteRelationship(ctx, c, graph.PartOf, ids["Wile E"], ids["Acme"])
	check("delete relationship", err)
	moments = append(moments, clk.t)
	rel.Metadata = map[string]any{"role": "supplier"}
	_, _, err = b.svc.CreateRelationship(ctx, c, rel)
	check("create relationship again", err)
	moments = append(moments, clk.t)
	// Schemas: a global type registered by the operator, and a type of
	// the user's own with three versions, the second active; entities of
	// both; a recommendation, and auto-enhancement switched off.
	_, err = b.svc.RegisterSchema(ctx, knowledge.Caller{}, knowledge.RegisterSchemaRequest{Global: true, Activate: true, By: "operator",
		Schema: &schema.Schema{EntityType: "planet", Fields: map[string]schema.Field{"name": {Type: schema.TypeString, Identifier: true},
			"moons": {Type: schema.TypeNumber}}, IdentityFields: []string{"name"}, NameFields: []string{"name"}}})
	check("register global schema", err)
	ship := func(version string, extra ...string) *schema.Schema {
		sc := &schema.Schema{EntityType: "spaceship", Version: version, Fields: map[string]schema.Field{
			"name": {Type: schema.TypeString, Identifier: true}, "crew": {Type: schema.TypeNumber},
			"launch_date": {Type: schema.TypeDate, EventType: "launched"}}, IdentityFields: []string{"name"}, NameFields: []string{"name"}}
		for _, f := range extra {
			sc.Fields[f] = schema.Field{Type: schema.TypeString}
		}
		return sc
	}
	for _, r := range []knowledge.RegisterSchemaRequest{
		{Schema: ship("1.0"), Activate: true, By: "claude"},
		{Schema: ship("1.1", "captain"), Activate: true, By: "claude"},
		{Schema: ship("2.0", "captain", "registry"), By: "claude"},
	} {
		_, err := b.svc.RegisterSchema(ctx, c, r)
		check("register schema", err)
	}
	store("s4",
		map[string]any{"entity_type": "spaceship", "name": "Rocket Sled", "crew": json.Number("1"), "captain": "Wile E", "launch_date": "2001-02-03", "paint": "red"},
		map[string]any{"entity_type": "planet", "name": "Mars", "moons": json.Number("2")},
	)
	check("recommendation", b.stores.Control.PutRecommendations(ctx, []schema.Recommendation{{
		ID: "rec_1", UserID: u.ID, EntityType: "spaceship", Fields: []schema.RecommendedField{{Name: "paint", Type: schema.TypeString}},
		Source: schema.RecommendationFromRawFragments, Confidence: 0.75, Reasoning: "seen once", Status: schema.RecommendationPending,
		CreatedAt: clk.now(), UpdatedAt: clk.now(),
	}}))
	check("auto-enhance", b.stores.Control.SetAutoEnhance(ctx, u.ID, false))
	// A stored file larger than a blob line.
	put, err := b.files.Put(ctx, c, strings.NewReader(fileContent()), files.PutRequest{Filename: "log.txt"})
	check("put file", err)
	// What its interpretation would have found it to hold: consent
	// follows it through an export and back.
	check("file types", b.stores.Control.AddFileTypes(ctx, u.ID, put.File.ID, []string{"spaceship"}))
	// Memories with tags and entity links, and a claim that contradicts.
	for _, m := range []knowledge.MemoryRequest{
		{Collection: "notes", Text: "Wile E keeps buying rockets from Acme", Tags: []string{"purchases"}, EntityIDs: []string{ids["Wile E"], ids["Acme"]}},
		{Collection: "notes", Title: "speed", Text: "The road runner is faster than any rocket", Tags: []string{"speed", "birds"},
			OccurredAt: time.Date(1949, time.September, 17, 12, 0, 0, 0, time.UTC)}, // said long before it was saved: kept
		{Collection: "notes", Title: "log", Text: "The sled's log: rockets fired twice", SourceID: put.File.ID, Types: []string{"planet"}},
		{Collection: "insights", Text: "Acme ships anvils by mail", Claims: []knowledge.Claim{{EntityID: ids["Acme"], Field: "industry", Value: "mail order"}}},
	} {
		_, err := b.svc.SaveMemory(ctx, c, m)
		check("save memory", err)
	}
	// A profile with versions.
	_, _, err = b.svc.UpdateProfile(ctx, c, map[string]any{"name": "Chuck", "likes": []any{"desert"}}, "first")
	check("profile", err)
	_, _, err = b.svc.UpdateProfile(ctx, c, map[string]any{"likes": nil, "city": "Phoenix"}, "moved")
	check("profile", err)
	cs, err := b.svc.OpenContradictions(ctx, c)
	check("contradictions", err)
	if len(cs) == 0 {
		t.Fatal("the generated store has no contradiction")
	}
	return ids, moments
}

// fileContent is the text of the generated store's file: more than two
// blob lines.
func fileContent() string {
	var b strings.Builder
	for i := 0; b.Len() < 2*transfer.BlobChunk+1000; i++ {
		fmt.Fprintf(&b, "line %d: the road runner passed by at %d mph\n", i, i%97)
	}
	return b.String()
}

// exported exports every user of s, at a fixed time.
func exported(t *testing.T, s transfer.Stores, opts transfer.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts.Now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts.CairnVersion = "test"
	if _, err := transfer.Export(t.Context(), s, &buf, opts); err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes()
}

func imported(t *testing.T, s transfer.Stores, file []byte) transfer.Stats {
	t.Helper()
	st, err := transfer.Import(t.Context(), s, bytes.NewReader(file), transfer.ImportOptions{Embedder: embed.NewLocal(), BatchSize: 3})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return st
}

// reads are what a user sees of a store: snapshots now and as of each
// moment, provenance of every field, relationships as of each moment,
// entity and memory search.
func reads(t *testing.T, b backend, u consent.User, ids map[string]string, moments []time.Time) map[string]any {
	t.Helper()
	ctx := t.Context()
	c := knowledge.Caller{UserID: u.ID, AgentID: "claude"}
	out := map[string]any{}
	for name, id := range ids {
		for i, at := range append([]time.Time{{}}, moments...) {
			snap, err := b.svc.EntitySnapshot(ctx, c, id, at)
			if err != nil {
				out[name+"/snapshot/"+at.String()] = err.Error()
				continue
			}
			// ComputedAt of an as-of read is when it was read.
			snap.ComputedAt = time.Time{}
			out[name+"/snapshot/"+at.String()] = snap
			if i == 0 {
				for field := range snap.Entity.Snapshot {
					p, err := b.svc.FieldProvenance(ctx, c, id, field)
					if err != nil {
						t.Fatalf("provenance %s.%s: %v", name, field, err)
					}
					out[name+"/provenance/"+field] = p
				}
			}
		}
		for _, at := range append([]time.Time{{}}, moments...) {
			rels, total, err := b.svc.ListRelationships(ctx, c, knowledge.RelationshipQuery{EntityID: id, At: at})
			if err != nil {
				t.Fatal(err)
			}
			out[name+"/relationships/"+at.String()] = []any{rels, total}
		}
	}
	for _, q := range []string{"acme", "wile", "runner"} {
		hits, total, err := b.svc.SearchEntities(ctx, c, knowledge.EntitySearchQuery{Text: q, IncludeMerged: true})
		if err != nil {
			t.Fatal(err)
		}
		out["search/"+q] = []any{hits, total}
	}
	for _, owner := range []string{u.ID, ""} {
		for _, typ := range []string{"spaceship", "planet"} {
			vs, err := b.stores.Control.SchemaVersions(ctx, owner, typ)
			if err != nil {
				t.Fatal(err)
			}
			out["schemas/"+owner+"/"+typ] = vs
		}
	}
	recs, err := b.stores.Control.Recommendations(ctx, u.ID, "spaceship")
	if err != nil {
		t.Fatal(err)
	}
	out["recommendations"] = recs
	if out["auto_enhance"], err = b.stores.Control.AutoEnhance(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(fileContent()))
	r, f, err := b.files.Open(ctx, u.ID, knowledge.SourceID(u.ID, hex.EncodeToString(sum[:])))
	if err != nil {
		t.Fatalf("open the file: %v", err)
	}
	content, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	out["file"], out["file/bytes"] = f, string(content) == fileContent()
	for _, q := range []string{"rockets", "birds that run fast", ""} {
		res, err := b.svc.SearchMemories(ctx, c, knowledge.MemoryQuery{Collections: []string{"notes", "insights"}, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		out["memories/"+q] = res
	}
	return out
}

// TestRoundTripAcrossBackends exports a generated store with every kind of
// record from the embedded store, imports it into PostgreSQL, exports that
// and imports it into a new embedded store: the three exports are the
// same bytes, every read gives the same answer on the three stores, and an
// import run twice changes nothing.
func TestRoundTripAcrossBackends(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	src := openEmbedded(t, clk)
	u, err := src.stores.Control.CreateUser(ctx, "chuck")
	if err != nil {
		t.Fatal(err)
	}
	ids, moments := generate(t, src, clk, u)
	opts := transfer.ExportOptions{Users: []consent.User{u}, Consent: true, Vectors: true, GlobalSchemas: true}
	first := exported(t, src.stores, opts)
	vecs := exportedVectors(t, first)

	pg := openPostgres(t, clk)
	st := imported(t, pg.stores, first)
	if st.Written[transfer.KindObservation] == 0 || st.Written[transfer.KindRelationship] != st.Read[transfer.KindRelationship] ||
		st.Written[transfer.KindSchema] != st.Read[transfer.KindSchema] || st.Written[transfer.KindFile] != 1 || st.Written[transfer.KindBlob] != 1 {
		t.Errorf("first import wrote %v of %v", st.Written, st.Read)
	}
	if st.Read[transfer.KindBlob] < 3 || st.Read[transfer.KindSchema] != 4 {
		t.Errorf("the export holds %d blob lines (want 3 or more) and %d schema lines (want 4)", st.Read[transfer.KindBlob], st.Read[transfer.KindSchema])
	}
	t.Logf("first import: read %v, wrote %v", st.Read, st.Written)
	if st.Embedded != 0 {
		t.Errorf("an import with vectors of the same embedder embedded %d memories again", st.Embedded)
	}
	checkVectors(t, pg.stores, u, vecs)
	again := imported(t, pg.stores, first)
	for kind, n := range again.Written {
		if n != 0 {
			t.Errorf("second import wrote %d %s rows, want none", n, kind)
		}
	}
	second := exported(t, pg.stores, opts)
	if d := cmp.Diff(string(first), string(second)); d != "" {
		t.Errorf("the PostgreSQL export differs from the embedded one (-embedded +postgres):\n%s", d)
	}

	back := openEmbedded(t, clk)
	if st := imported(t, back.stores, second); st.Embedded != 0 {
		t.Errorf("the import back embedded %d memories again", st.Embedded)
	}
	checkVectors(t, back.stores, u, vecs)
	third := exported(t, back.stores, opts)
	if d := cmp.Diff(string(first), string(third)); d != "" {
		t.Errorf("the export after the round trip differs (-first +third):\n%s", d)
	}

	want := reads(t, src, u, ids, moments)
	if d := cmp.Diff(want, reads(t, back, u, ids, moments)); d != "" {
		t.Errorf("reads after the round trip differ (-source +embedded again):\n%s", d)
	}
	// PostgreSQL ranks full text its own way (vector.Driver.MatchText
	// says "by the backend's text ranking"): memory searches find the
	// same memories, with the same vector similarities, in an order and
	// with fused scores of their own.
	sameHits := cmp.Options{
		cmpopts.SortSlices(func(a, b vector.Hit) bool { return a.ID < b.ID }),
		cmpopts.IgnoreFields(vector.Hit{}, "Score", "Signals"),
		// Entity search: the same entities; the text score, and so the
		// order among entities both match, is each backend's own
		// (graph.EntitySearcher: scores are comparable within one
		// answer only). Both orders are checked on the embedded store.
		cmpopts.SortSlices(func(a, b knowledge.EntitySearchHit) bool { return a.Entity.ID < b.Entity.ID }),
		cmpopts.IgnoreFields(knowledge.EntitySearchHit{}, "Score"),
	}
	if d := cmp.Diff(want, reads(t, pg, u, ids, moments), sameHits); d != "" {
		t.Errorf("reads on PostgreSQL differ (-source +postgres):\n%s", d)
	}
}

// exportedVectors returns the vectors of the memory lines of an export
// with vectors, by memory id; every memory has one.
func exportedVectors(t *testing.T, file []byte) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, line := range bytes.Split(bytes.TrimSpace(file), []byte("\n")) {
		var l transfer.Line
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind != transfer.KindMemory {
			continue
		}
		var m transfer.Memory
		if err := json.Unmarshal(l.Data, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Embedding) != m.Space.Dimension || m.Space.Dimension == 0 {
			t.Fatalf("memory %s exported with %d numbers, its space has %d", m.ID, len(m.Embedding), m.Space.Dimension)
		}
		out[m.ID] = m.Embedding
	}
	if len(out) == 0 {
		t.Fatal("the export holds no memory")
	}
	return out
}

// checkVectors checks that s holds exactly the exported vectors.
func checkVectors(t *testing.T, s transfer.Stores, u consent.User, want map[string][]float32) {
	t.Helper()
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	got, err := s.Memories.Vectors(t.Context(), u.ID, ids)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored vectors differ from the exported ones (-exported +stored):\n%s", d)
	}
}

// TestImportWithoutBucket: an export with files, into a store without a
// file bucket, fails before writing anything.
func TestImportWithoutBucket(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	src := openEmbedded(t, clk)
	u, err := src.stores.Control.CreateUser(ctx, "chuck")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "claude"}
	if _, err := src.files.Put(ctx, c, strings.NewReader("a small file\n"), files.PutRequest{Filename: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	file := exported(t, src.stores, transfer.ExportOptions{Users: []consent.User{u}})

	dst := openEmbedded(t, clk)
	dst.stores.Bucket = nil
	_, err = transfer.Import(ctx, dst.stores, bytes.NewReader(file), transfer.ImportOptions{Embedder: embed.NewLocal()})
	if err == nil || !strings.Contains(err.Error(), "no file bucket") {
		t.Fatalf("import without a bucket: got %v, want a no file bucket error", err)
	}
	if users, err := dst.stores.Control.ListUsers(ctx); err != nil || len(users) != 0 {
		t.Errorf("the failed import wrote users %v (%v)", users, err)
	}
	// And an export needs the bucket to read the bytes from.
	src.stores.Bucket = nil
	if _, err := transfer.Export(ctx, src.stores, io.Discard, transfer.ExportOptions{Users: []consent.User{u}}); err == nil {
		t.Error("an export of a user with files and no bucket succeeded")
	}
}
