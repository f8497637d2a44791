package files_test

import (
	"errors"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// TestEraseFileSource: erasing a stored file's source erases what
// interpreting it produced (the batches that name it, their entities) and
// the file's bytes and row.
func TestEraseFileSource(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "bank.csv", transactionsCSV(3))
		if _, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil); err != nil {
			t.Fatal(err)
		}
		runAll(t, e, files.RunnerOptions{Batch: 100})
		if n := len(entitiesOf(t, e, alice, "transaction")); n != 3 {
			t.Fatalf("interpreted %d transactions, want 3", n)
		}
		res, err := e.know.Erase(t.Context(), alice, knowledge.EraseRequest{Kind: knowledge.EraseSource, IDs: []string{st.File.ID}, Reason: "asked"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Counts["files"] != 1 || res.Counts["sources"] < 2 || res.Counts["entities"] != 3 {
			t.Errorf("counts %v: want the file, its source and a batch, and the 3 transactions", res.Counts)
		}
		if n := len(entitiesOf(t, e, alice, "transaction")); n != 0 {
			t.Errorf("%d transactions left", n)
		}
		if keys := blobKeys(t, e.bucket); len(keys) != 0 {
			t.Errorf("the bucket still holds %v", keys)
		}
		if _, err := e.control.File(t.Context(), alice.UserID, st.File.ID); !errors.Is(err, files.ErrFileNotFound) {
			t.Errorf("the file's row: %v", err)
		}
	})
}
