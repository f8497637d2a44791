package transfer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector/embed"
)

// backends are the stores the import tests run on: the embedded one, and
// PostgreSQL when CAIRN_TEST_DATABASE_URL names a server.
var backends = []struct {
	name string
	open func(*testing.T, *clock) backend
}{
	{"Embedded", openEmbedded},
	{"Postgres", openPostgres},
}

// smallStore stores three people for a new user of b and returns the user
// and the entity ids by name.
func smallStore(t *testing.T, b backend, clk *clock) (consent.User, map[string]string) {
	t.Helper()
	ctx := t.Context()
	u, err := b.stores.Control.CreateUser(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "claude"}
	es := []map[string]any{
		{"entity_type": "person", "name": "Ada", "city": "London"},
		{"entity_type": "person", "name": "Charles", "city": "London"},
		{"entity_type": "person", "name": "Grace", "city": "New York"},
	}
	res, err := b.svc.Store(ctx, c, knowledge.StoreRequest{Entities: es, Provenance: map[string]any{"agent_id": "claude"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i, e := range res.Entities {
		ids[es[i]["name"].(string)] = e.EntityID
	}
	return u, ids
}

// exportLines is an export split into lines, each decoded.
type exportLines []map[string]any

func splitExport(t *testing.T, file []byte) exportLines {
	t.Helper()
	var out exportLines
	for _, l := range bytes.Split(bytes.TrimSpace(file), []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// edit changes the data of the first line of kind for which match holds,
// and returns its line number (1 is the header).
func (ls exportLines) edit(t *testing.T, kind string, match func(map[string]any) bool, change func(map[string]any)) int {
	t.Helper()
	for i, l := range ls {
		if l["kind"] == kind && match(l["data"].(map[string]any)) {
			change(l["data"].(map[string]any))
			return i + 1
		}
	}
	t.Fatalf("no %s line to edit", kind)
	return 0
}

func (ls exportLines) bytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, l := range ls {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	return buf.Bytes()
}

func importOpts(t *testing.T, s transfer.Stores, file []byte, opts transfer.ImportOptions) transfer.Stats {
	t.Helper()
	opts.Embedder = embed.NewLocal()
	st, err := transfer.Import(t.Context(), s, bytes.NewReader(file), opts)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return st
}

func entityOf(t *testing.T, s transfer.Stores, userID, id string) (graph.Entity, []graph.Observation) {
	t.Helper()
	var e graph.Entity
	var obs []graph.Observation
	err := s.Graph.View(t.Context(), func(tx *graph.Tx) error {
		var err error
		if e, err = tx.Entity(t.Context(), userID, id); err != nil {
			return err
		}
		obs, err = tx.AllObservations(t.Context(), userID, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, obs
}

func refusedLines(st transfer.Stats) []int {
	var out []int
	for _, r := range st.Refused {
		out = append(out, r.Line)
	}
	return out
}

// TestImportNeverOverwrites (issue #34, D6): an export line edited to give
// a held entity another snapshot, canonical name and provenance, and a new
// observation of it, leaves the store as it was and is counted as held;
// imported into an empty store, the edited entity is refused with its
// line number, since its snapshot disagrees with its observations.
func TestImportNeverOverwrites(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
			b := bk.open(t, clk)
			u, ids := smallStore(t, b, clk)
			file := exported(t, b.stores, transfer.ExportOptions{Users: []consent.User{u}})
			ls := splitExport(t, file)
			ada := ids["Ada"]
			line := ls.edit(t, transfer.KindEntity, func(d map[string]any) bool { return d["id"] == ada }, func(d map[string]any) {
				d["canonical_name"] = "Ada HACKED"
				d["snapshot"].(map[string]any)["name"] = "Ada HACKED"
				d["provenance"].(map[string]any)["name"] = "obs_does_not_exist"
			})
			ls.edit(t, transfer.KindObservation, func(d map[string]any) bool { return d["entity_id"] == ada }, func(d map[string]any) {
				d["id"] = "obs_forged"
				d["fields"] = map[string]any{"name": "Ada HACKED"}
			})
			edited := ls.bytes(t)

			beforeE, beforeObs := entityOf(t, b.stores, u.ID, ada)
			if st := importOpts(t, b.stores, file, transfer.ImportOptions{}); st.Checksum != transfer.ChecksumVerified {
				t.Errorf("the export as written: checksum %q, want verified", st.Checksum)
			}
			st := importOpts(t, b.stores, edited, transfer.ImportOptions{})
			if st.Checksum != transfer.ChecksumMismatch {
				t.Errorf("the edited export: checksum %q, want mismatch", st.Checksum)
			}
			afterE, afterObs := entityOf(t, b.stores, u.ID, ada)
			if d := cmp.Diff(beforeE, afterE); d != "" {
				t.Errorf("the import changed the held entity (-before +after):\n%s", d)
			}
			if d := cmp.Diff(beforeObs, afterObs); d != "" {
				t.Errorf("the import changed the held entity's observations (-before +after):\n%s", d)
			}
			if st.Written[transfer.KindEntity] != 0 || st.Written[transfer.KindObservation] != 0 {
				t.Errorf("wrote %v", st.Written)
			}
			if got := st.Skipped[transfer.SkipHeld][transfer.KindEntity]; got != 3 {
				t.Errorf("%d entity lines counted as held, want 3 (skipped: %v)", got, st.Skipped)
			}
			t.Logf("into the same store: written %v, skipped %v", st.Written, st.Skipped)

			// Into an empty store: the others are written, the edited Ada
			// and her observations are refused.
			empty := bk.open(t, clk)
			st = importOpts(t, empty.stores, edited, transfer.ImportOptions{})
			if st.Written[transfer.KindEntity] != 2 || st.Skipped[transfer.SkipInvalid][transfer.KindEntity] != 1 {
				t.Errorf("into an empty store: written %v, skipped %v; want 2 entities written, 1 refused", st.Written, st.Skipped)
			}
			if !slices.Contains(refusedLines(st), line) {
				t.Errorf("refused %v, want line %d among them", st.Refused, line)
			}
			t.Logf("into an empty store: refused %v", st.Refused)
			err := empty.stores.Graph.View(t.Context(), func(tx *graph.Tx) error {
				_, err := tx.Entity(t.Context(), u.ID, ada)
				if !graph.IsNotFound(err) {
					t.Errorf("the refused entity was stored (err %v)", err)
				}
				obs, err := tx.AllObservations(t.Context(), u.ID, ada)
				if len(obs) != 0 {
					t.Errorf("the refused entity's observations were stored: %v", obs)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestImportConsentOnlyWhenAsked (issue #34, D7): agents and consent rules
// of an export are not imported without ImportOptions.Agents and Consent;
// with them, only the rules of agents the import creates are, never a
// rule for an agent the store held.
func TestImportConsentOnlyWhenAsked(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			ctx := t.Context()
			clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
			src := bk.open(t, clk)
			u, _ := smallStore(t, src, clk)
			agent, err := src.stores.Control.CreateAgent(ctx, u.ID, "intruder")
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []consent.Action{consent.Read, consent.Write} {
				if _, err := src.stores.Control.SetRule(ctx, consent.Rule{UserID: u.ID, AgentID: agent.ID, Pattern: "*", Action: a, Effect: consent.Allow}); err != nil {
					t.Fatal(err)
				}
			}
			file := exported(t, src.stores, transfer.ExportOptions{Users: []consent.User{u}, Consent: true, Audit: true})

			dst := bk.open(t, clk)
			st := importOpts(t, dst.stores, file, transfer.ImportOptions{})
			agents, err := dst.stores.Control.ListAgents(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			rules, err := dst.stores.Control.ListRules(ctx, u.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(agents) != 0 || len(rules) != 0 {
				t.Errorf("without the flags the import wrote agents %v and rules %v", agents, rules)
			}
			if got := st.Skipped[transfer.SkipNotAsked][transfer.KindRow]; got != 3 {
				t.Errorf("%d rows counted as not asked for, want 3 (skipped %v)", got, st.Skipped)
			}
			t.Logf("without flags: skipped %v", st.Skipped)

			// A store that holds the agent already: with the flags, its
			// rules are still not imported.
			held := bk.open(t, clk)
			if _, err := held.stores.Control.ImportUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			if _, err := held.stores.Control.ImportRows(ctx, controlplane.TableAgents, []map[string]any{{"id": agent.ID, "user_id": u.ID, "name": "intruder", "created_at": int64(1)}}); err != nil {
				t.Fatal(err)
			}
			st = importOpts(t, held.stores, file, transfer.ImportOptions{Agents: true, Consent: true})
			if rules, err := held.stores.Control.ListRules(ctx, u.ID, ""); err != nil || len(rules) != 0 {
				t.Errorf("rules of an agent the store held were imported: %v (%v)", rules, err)
			}
			t.Logf("into a store holding the agent: skipped %v", st.Skipped)

			// Into an empty store with the flags: the agent and its rules.
			fresh := bk.open(t, clk)
			st = importOpts(t, fresh.stores, file, transfer.ImportOptions{Agents: true, Consent: true})
			rules, err = fresh.stores.Control.ListRules(ctx, u.ID, "")
			if err != nil || len(rules) != 2 {
				t.Errorf("with the flags: rules %v (%v), want 2", rules, err)
			}
		})
	}
}

// TestImportRefusesInvalidLines (issue #34, D7): an entity with an empty
// id, one of type <script>, and one with a field over MaxFieldBytes are
// refused with their observations, with their line numbers, and counted.
func TestImportRefusesInvalidLines(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
			src := bk.open(t, clk)
			u, ids := smallStore(t, src, clk)
			file := exported(t, src.stores, transfer.ExportOptions{Users: []consent.User{u}})
			ls := splitExport(t, file)
			// Each edit keeps the entity's snapshot in agreement with its
			// observations: only the checks of values refuse them.
			editAll := func(id string, entity, obs func(map[string]any)) []int {
				lines := []int{ls.edit(t, transfer.KindEntity, func(d map[string]any) bool { return d["id"] == id }, entity)}
				for i, l := range ls {
					if d, ok := l["data"].(map[string]any); ok && l["kind"] == transfer.KindObservation && d["entity_id"] == id {
						obs(d)
						lines = append(lines, i+1)
					}
				}
				return lines
			}
			var want []int
			want = append(want, editAll(ids["Ada"], func(d map[string]any) { d["id"] = "" }, func(d map[string]any) { d["entity_id"] = "" })...)
			want = append(want, editAll(ids["Charles"], func(d map[string]any) { d["type"] = "<script>" }, func(d map[string]any) { d["entity_type"] = "<script>" })...)
			big := strings.Repeat("x", 2000)
			want = append(want, editAll(ids["Grace"], func(d map[string]any) { d["snapshot"].(map[string]any)["city"] = big },
				func(d map[string]any) { d["fields"].(map[string]any)["city"] = big })...)
			st := importOpts(t, bk.open(t, clk).stores, ls.bytes(t), transfer.ImportOptions{MaxFieldBytes: 1000})
			slices.Sort(want)
			if d := cmp.Diff(want, refusedLines(st)); d != "" {
				t.Errorf("refused lines (-want +got):\n%s\nrefused: %v", d, st.Refused)
			}
			if st.Written[transfer.KindEntity] != 0 || st.Written[transfer.KindObservation] != 0 || st.Skipped[transfer.SkipInvalid][transfer.KindEntity] != 3 {
				t.Errorf("written %v, skipped %v; want nothing written, 3 entities refused", st.Written, st.Skipped)
			}
			for _, r := range st.Refused {
				t.Logf("refused %s", r)
			}
		})
	}
}

// zeros reads as n bytes of 'x'.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), z.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	z.n -= k
	return k, nil
}

// TestImportBoundsLineLength (issue #34, D7): a 50 MB line is refused as
// it is read, without holding it: the import allocates far less than the
// line, and the lines after it are imported.
func TestImportBoundsLineLength(t *testing.T) {
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	src := openEmbedded(t, clk)
	u, ids := smallStore(t, src, clk)
	ls := splitExport(t, exported(t, src.stores, transfer.ExportOptions{Users: []consent.User{u}}))
	// A raw fragment line of the export becomes one of 50 MB.
	i := slices.IndexFunc(ls, func(l map[string]any) bool { return l["kind"] == transfer.KindRawFragment })
	before, after := ls[:i].bytes(t), ls[i+1:].bytes(t)
	head := fmt.Sprintf(`{"kind":"raw_fragment","user":%q,"data":{"id":"`, u.ID)
	const size = 50 << 20
	r := io.MultiReader(bytes.NewReader(before), strings.NewReader(head), &zeros{size}, strings.NewReader("\"}}\n"), bytes.NewReader(after))

	dst := openEmbedded(t, clk)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	st, err := transfer.Import(t.Context(), dst.stores, r, transfer.ImportOptions{Embedder: embed.NewLocal()})
	runtime.ReadMemStats(&m1)
	if err == nil {
		// The end line counts the raw fragment lines: the refused one is
		// counted as read, so the counts add up.
		t.Logf("import: read %v, refused %v", st.Read, st.Refused)
	} else {
		t.Fatalf("import: %v", err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > size*3/4 {
		t.Errorf("the import allocated %d MB for a %d MB line", alloc>>20, size>>20)
	} else {
		t.Logf("the import allocated %d MB for a %d MB line", alloc>>20, size>>20)
	}
	if len(st.Refused) != 1 || st.Refused[0].Line != i+1 || !strings.Contains(st.Refused[0].Reason, "longer than") {
		t.Errorf("refused %v, want line %d as too long", st.Refused, i+1)
	}
	if st.Written[transfer.KindEntity] != len(ids) || st.Written[transfer.KindRawFragment] != st.Read[transfer.KindRawFragment]-1 {
		t.Errorf("written %v", st.Written)
	}
}
