package files_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
)

// slowEmbedder embeds a text that holds slowWord only after a pause, as
// a long text takes on a busy machine; started is closed when the pause
// begins.
type slowEmbedder struct {
	embed.Embedder
	pause   time.Duration
	started chan struct{}
	once    *sync.Once
}

const slowWord = "zzslowzz"

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, slowWord) {
			s.once.Do(func() { close(s.started) })
			select {
			case <-time.After(s.pause):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			break
		}
	}
	return s.Embedder.Embed(ctx, texts)
}

// While an interpreted file's text is saved as a memory (embedding a long
// text takes seconds on a busy machine), the lease is renewed: another
// worker does not take the job, which succeeds in one attempt.
func TestLeaseRenewedWhileTextIsSaved(t *testing.T) {
	db := sqlitetest.Open(t)
	g := graph.NewStore(embedded.New(db))
	t.Cleanup(func() { g.Close() })
	cp := controlplane.New(db.Write, migrations.SQLite)
	slow := slowEmbedder{Embedder: embed.NewLocal(), pause: 4 * time.Second, started: make(chan struct{}), once: &sync.Once{}}
	e := newEnvOn(t, cp, g, files.Options{}, knowledge.Options{Memories: vector.NewStore(vembedded.New(db)), Embedder: slow})
	st := put(t, e, alice, "notes.md", []byte("# Notes\n\nA long text, "+slowWord+", that takes a while to embed.\n"))
	j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := files.RunnerOptions{Lease: 3 * time.Second}
	ran := make(chan error, 1)
	go func() {
		_, err := e.svc.RunOne(t.Context(), o, "worker-1")
		ran <- err
	}()
	select {
	case <-slow.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the file's text was not embedded within 20 s")
	}
	// The clock runs at twice the real pace: 8 s pass during the 4 s
	// embedding, beyond the 3 s lease, which the heartbeat renews every
	// second (6 s of this clock).
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		e.clock.Advance(200 * time.Millisecond)
		if took, err := e.svc.RunOne(t.Context(), o, "worker-2"); err != nil || took {
			t.Fatalf("a second worker took the job (%v, %v)", took, err)
		}
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if j, _ = e.svc.Job(t.Context(), alice, j.ID); j.Status != files.JobSucceeded || j.Attempts != 1 {
		t.Fatalf("job = %s %s after %d attempts, want succeeded after 1", j.Status, j.ErrorCode, j.Attempts)
	}
}
