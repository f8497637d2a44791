package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// TestStartGivesStoredEntitiesTextSigs: entities stored before their text
// signatures were kept (migration 016 leaves them NULL) get theirs once the
// process starts its workers, and the log says how many.
func TestStartGivesStoredEntitiesTextSigs(t *testing.T) {
	var logs syncBuffer
	a, err := openApp(t.Context(), appConfig{dataDir: t.TempDir()}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e := graph.Entity{ID: "ent_1", UserID: "usr_1", Type: "note", CanonicalName: "Launch plan", SchemaVersion: "1.0",
		Snapshot: map[string]any{"text": "rocket"}, LastObservationAt: time.Now(), CreatedAt: time.Now(), ComputedAt: time.Now()}
	if err := a.graph.Update(t.Context(), func(tx *graph.Tx) error { return tx.PutEntity(t.Context(), e) }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.backend.sqlite.Write.ExecContext(t.Context(), `UPDATE entities SET text_sig = NULL`); err != nil {
		t.Fatal(err)
	}
	a.startTextSigBackfill(t.Context())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var stats []graph.EntityStat
		err := a.graph.View(t.Context(), func(tx *graph.Tx) (err error) {
			stats, err = tx.ListEntityStats(t.Context(), graph.EntityFilter{UserID: "usr_1", TextSigs: true})
			return err
		})
		if err != nil || len(stats) != 1 {
			t.Fatalf("stats %+v, %v", stats, err)
		}
		if bytes.Equal(stats[0].TextSig, graph.EntityTextSig(e)) && strings.Contains(logs.String(), "entities=1") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: signature %v, log %q", stats[0].TextSig, logs.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
