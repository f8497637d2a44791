package evalset_test

import (
	"os"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embed/uselite"
	"github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/evalset"
)

func openStore(tb testing.TB) *vector.Store {
	tb.Helper()
	s := vector.NewStore(embedded.New(sqlitetest.Open(tb)))
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestRunSmoke runs the harness on a slice of the set with the lexical
// embedder: the figures are in range, and a question that repeats its
// answer's words finds it first by BM25.
func TestRunSmoke(t *testing.T) {
	set, err := evalset.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := set.Conversations[0]
	c.Turns = c.Turns[:60]
	in := map[string]bool{}
	for _, tr := range c.Turns {
		in[tr.ID] = true
	}
	var qs []evalset.Question
	for _, q := range c.Questions {
		if in[q.Answers[0]] && len(q.Answers) == 1 {
			qs = append(qs, q)
		}
	}
	verbatim := evalset.Question{ID: "verbatim", Kind: evalset.SingleFact, Answers: qs[0].Answers}
	for _, tr := range c.Turns {
		if tr.ID == qs[0].Answers[0] {
			verbatim.Text = tr.Text
		}
	}
	c.Questions = []evalset.Question{verbatim}
	rep, err := evalset.Run(t.Context(), openStore(t), embed.NewLocal(), evalset.Set{Conversations: []evalset.Conversation{c}},
		evalset.Options{MinSimilarity: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 60 || rep.Questions != 1 || len(rep.Modes) != 5 {
		t.Fatalf("report %+v", rep)
	}
	for _, m := range rep.Modes {
		if m.All.R1 != 1 {
			t.Errorf("%s: the turn's own words did not find it first: %+v", m.Mode, m.All)
		}
	}
}

// BenchmarkRetrieval measures the whole set on the embedded store with
// the embedder CAIRN_EVAL_EMBEDDER names (local, or use-lite, the default
// when the binary carries it), and prints the report once:
//
//	go test ./vector/evalset -run '^$' -bench Retrieval -benchtime 1x
//
// cairn bench --retrieval runs the same with any embedder serve accepts,
// and on PostgreSQL.
func BenchmarkRetrieval(b *testing.B) {
	set, err := evalset.Load()
	if err != nil {
		b.Fatal(err)
	}
	var emb evalset.Embedder = embed.NewLocal()
	minSim := vector.DefaultMinSimilarity
	if name := os.Getenv("CAIRN_EVAL_EMBEDDER"); name != "local" && uselite.Available() {
		u, err := uselite.New()
		if err != nil {
			b.Fatal(err)
		}
		emb, minSim = u, u.MinSimilarity()
	}
	for b.Loop() {
		rep, err := evalset.Run(b.Context(), openStore(b), emb, set, evalset.Options{MinSimilarity: minSim, Progress: os.Stderr})
		if err != nil {
			b.Fatal(err)
		}
		rep.Print(os.Stdout)
	}
}
