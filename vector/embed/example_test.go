package embed_test

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/vector/embed"
)

func ExampleNewLocal() {
	e := embed.NewLocal()
	vecs, err := e.Embed(context.Background(), []string{
		"invoice payment overdue",
		"the invoices were paid late",
		"my cat likes fish",
	})
	if err != nil {
		panic(err)
	}
	// Vectors are unit length, so the dot product is the cosine similarity.
	cos := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(e.Name(), len(vecs[0]))
	fmt.Println(cos(vecs[0], vecs[1]) > cos(vecs[0], vecs[2]))
	// Output:
	// local:hash-ngram-v1:384 384
	// true
}
