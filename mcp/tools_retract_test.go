package mcp_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge"
)

// TestRetractSettlesContradictions: a contradiction one side of which is
// retracted (the observation that held the current value, the one that
// held the new value, or the memory that claimed it) no longer asks
// anything, and is resolved as retracted by the retracting agent at the
// retraction's time; undoing the retraction opens it again, unless its
// other side is still retracted. A contradiction already resolved keeps
// its resolution, and a rejected observation stays rejected.
func TestRetractSettlesContradictions(t *testing.T) {
	for _, b := range []storeBackend{embeddedBackend, postgresBackend} {
		t.Run(b.name, func(t *testing.T) {
			e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
			ctx := t.Context()
			ann := storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Nurse"})
			provenance := func() string {
				t.Helper()
				s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann})
				return s["provenance"].(map[string]any)["title"].(string)
			}
			title := func() any {
				t.Helper()
				s := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ann})
				return s["snapshot"].(map[string]any)["title"]
			}
			nurse := provenance()
			e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Surgeon"}},
				"source_priority": 10})
			surgeon := provenance()
			// A memory claims another title, and a third source says Chef,
			// which the user rejects.
			mem := e.mustCall(t, "save_memory", map[string]any{"collection": "notes", "text": "Ann is a doctor",
				"claims": []any{map[string]any{"entity_id": ann, "field": "title", "value": "Doctor"}}})
			memID := mem["id"].(string)
			e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ann Lee", "title": "Chef"}}})
			open := func() map[string]map[string]any {
				t.Helper()
				out := map[string]map[string]any{}
				for _, c := range e.mustCall(t, "review_memories", map[string]any{"action": "list"})["contradictions"].([]any) {
					c := c.(map[string]any)
					out[c["new_value"].(string)] = c
				}
				return out
			}
			before := open()
			if len(before) != 3 || before["Surgeon"] == nil || before["Doctor"] == nil || before["Chef"] == nil {
				t.Fatalf("open contradictions %v, want Surgeon, Doctor and Chef", before)
			}
			bySurgeon, byMemory, byChef := before["Surgeon"]["contradiction_id"].(string), before["Doctor"]["contradiction_id"].(string), before["Chef"]["contradiction_id"].(string)
			if before["Surgeon"]["current_observation_id"] != nurse || before["Surgeon"]["new_observation_id"] != surgeon ||
				before["Doctor"]["current_observation_id"] != surgeon || before["Doctor"]["new_observation_id"] != memID {
				t.Fatalf("contradictions %v: want Nurse against Surgeon and Surgeon against the memory", before)
			}
			e.mustCall(t, "review_memories", map[string]any{"action": "resolve", "contradiction_id": byChef, "resolution": "reject"})

			stored := func(id string) knowledge.Contradiction {
				t.Helper()
				c, err := e.control.Contradiction(ctx, e.owner.UserID, id)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			retract := func(undo bool, ids ...string) (map[string]any, []string) {
				t.Helper()
				out := e.mustCall(t, "retract", map[string]any{"observation_ids": ids, "undo": undo, "reason": "wrong"})
				var cs []string
				for _, c := range orNoList(out["contradictions"]) {
					cs = append(cs, c.(string))
				}
				slices.Sort(cs)
				return out, cs
			}
			sorted := func(ids ...string) []string { slices.Sort(ids); return ids }

			// The new side: Surgeon is retracted, and with it the question
			// whether Ann is a nurse or a surgeon; so is the memory's
			// question, whose current side was Surgeon.
			out, cs := retract(false, surgeon)
			if want := sorted(bySurgeon, byMemory); !slices.Equal(cs, want) {
				t.Errorf("retracting Surgeon closed %v, want %v", cs, want)
			}
			at, _ := time.Parse(time.RFC3339Nano, out["at"].(string))
			for _, id := range []string{bySurgeon, byMemory} {
				c := stored(id)
				if c.Status != knowledge.ContradictionResolved || c.Resolution != knowledge.Retracted || c.ResolvedBy != e.owner.AgentName || !c.ResolvedAt.Equal(at) {
					t.Errorf("contradiction %s after the retraction: %+v, want resolved as retracted by %s at %v", id, c, e.owner.AgentName, at)
				}
			}
			if c := stored(byChef); c.Resolution != knowledge.Reject {
				t.Errorf("the rejected contradiction became %+v", c)
			}
			if got := open(); len(got) != 0 {
				t.Errorf("still open after the retraction: %v", got)
			}
			if title() != "Nurse" {
				t.Errorf("title %v after retracting Surgeon, want Nurse (Chef stays rejected)", title())
			}
			if _, merr := e.call(t, "review_memories", map[string]any{"action": "resolve", "contradiction_id": bySurgeon, "resolution": "confirm"}); merr == nil || merr.Body.Code != "VALIDATION_ERROR" {
				t.Errorf("resolving a contradiction the retraction closed: %v", merr)
			}
			if exp := string(newExport(t, e)); !strings.Contains(exp, `"resolution":"retracted"`) {
				t.Error("the export does not carry the contradictions' resolution as retracted")
			}

			// Undo opens both again.
			if _, cs := retract(true, surgeon); !slices.Equal(cs, sorted(bySurgeon, byMemory)) {
				t.Errorf("undoing opened %v, want %v", cs, sorted(bySurgeon, byMemory))
			}
			if got := open(); len(got) != 2 || got["Surgeon"] == nil || got["Doctor"] == nil || got["Surgeon"]["resolved_by"] != nil {
				t.Errorf("open after the undo: %v", got)
			}
			if c := stored(bySurgeon); c.Status != knowledge.ContradictionOpen || c.Resolution != "" || !c.ResolvedAt.IsZero() || c.ResolvedBy != "" {
				t.Errorf("reopened contradiction %+v", c)
			}

			// The current side, then both: undoing one keeps it closed
			// while the other is still retracted.
			if _, cs := retract(false, nurse); !slices.Equal(cs, []string{bySurgeon}) {
				t.Errorf("retracting Nurse closed %v, want [%s]", cs, bySurgeon)
			}
			if _, cs := retract(false, surgeon); !slices.Equal(cs, []string{byMemory}) {
				t.Errorf("retracting Surgeon too closed %v, want [%s]", cs, byMemory)
			}
			if _, cs := retract(true, nurse); len(cs) != 0 {
				t.Errorf("undoing Nurse while Surgeon is retracted opened %v", cs)
			}
			if _, cs := retract(true, surgeon); !slices.Equal(cs, sorted(bySurgeon, byMemory)) {
				t.Errorf("undoing Surgeon opened %v, want both", cs)
			}

			// Retracting the memory closes its claim's contradiction; a
			// retraction's undo does not open it while the memory is
			// retracted.
			del := e.mustCall(t, "delete_memory", map[string]any{"memory_ids": []string{memID}, "mode": "retract"})
			if c := del["counts"].(map[string]any); c["contradictions"] != 1.0 {
				t.Errorf("delete_memory counts %v, want 1 contradiction", c)
			}
			if c := stored(byMemory); c.Resolution != knowledge.Retracted || c.ResolvedBy != e.owner.AgentName {
				t.Errorf("the retracted memory's contradiction: %+v", c)
			}
			if got := open(); len(got) != 1 || got["Surgeon"] == nil {
				t.Errorf("open after retracting the memory: %v", got)
			}
			retract(false, surgeon)
			if _, cs := retract(true, surgeon); !slices.Equal(cs, []string{bySurgeon}) {
				t.Errorf("undoing Surgeon with the memory retracted opened %v, want [%s]", cs, bySurgeon)
			}
			// Erasing the memory takes its contradiction, closed, with it.
			del = e.mustCall(t, "delete_memory", map[string]any{"memory_ids": []string{memID}, "mode": "erase"})
			if c := del["counts"].(map[string]any); c["contradictions"] != 1.0 {
				t.Errorf("erasing the retracted memory: counts %v", c)
			}
		})
	}
}

// orNoList is v as a list, or none when it is absent.
func orNoList(v any) []any {
	l, _ := v.([]any)
	return l
}
