package vector_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embedded"
)

// A Store saves memories with their embeddings and finds them by meaning
// and by keyword; the caller embeds, and names the embedder's space.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cairn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.OpenFile(ctx, filepath.Join(dir, "cairn.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store := vector.NewStore(embedded.New(db))
	defer store.Close()

	e := embed.NewLocal()
	texts := []string{"Dentist appointment on Tuesday at 3pm", "Prefers aisle seats on long train rides"}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		log.Fatal(err)
	}
	space := vector.Space{Embedder: e.Name(), Dimension: e.Dimension()}
	for i, text := range texts {
		if _, err := store.Save(ctx, space, vector.Memory{UserID: "u1", Collection: "notes", Text: text, Embedding: vecs[i]}); err != nil {
			log.Fatal(err)
		}
	}

	query := "dentist on tuesday"
	qv, err := e.Embed(ctx, []string{query})
	if err != nil {
		log.Fatal(err)
	}
	res, err := store.Search(ctx, vector.Query{
		Filter: vector.Filter{UserID: "u1", Collections: []string{"notes"}},
		Text:   query, Vector: qv[0], Space: space, MinSimilarity: new(0.3),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Println(h.Text, h.Signals)
	}
	// Output: Dentist appointment on Tuesday at 3pm [vector text]
}

// Fuse ranks by reciprocal rank fusion: a row found by both signals
// outranks rows found by one at the same ranks.
func ExampleFuse() {
	vec := []vector.Scored{{ID: "a", Score: 0.9}, {ID: "b", Score: 0.8}}
	text := []vector.Scored{{ID: "b", Score: 3.1}, {ID: "c", Score: 2.0}}
	for _, h := range vector.Fuse(vec, text) {
		fmt.Printf("%s %.4f %v\n", h.ID, h.Score, h.Signals)
	}
	// Output:
	// b 0.0325 [vector text]
	// a 0.0164 [vector]
	// c 0.0161 [text]
}
