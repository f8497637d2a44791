package graph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// withoutSearch is a driver whose transactions lack graph.EntitySearcher
// (and every other optional capability, graph.TimelinePeriodLister too):
// embedding the DriverTx interface hides every other method.
type withoutSearch struct{ graph.Driver }

type plainTx struct{ graph.DriverTx }

func (d withoutSearch) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.Driver.Update(ctx, func(tx graph.DriverTx) error { return fn(plainTx{tx}) })
}

func (d withoutSearch) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.Driver.View(ctx, func(tx graph.DriverTx) error { return fn(plainTx{tx}) })
}

// TestSearchWithoutIndex holds the portable scan, which a driver without
// an index gets, to the contract the indexes keep.
func TestSearchWithoutIndex(t *testing.T) {
	graphtest.RunEntitySearch(t, func(t *testing.T) *graph.Store {
		t.Helper()
		db := sqlitetest.Open(t)
		return graph.NewStore(withoutSearch{embedded.New(db)})
	})
}

func TestSearchTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ,;!  ", nil},
		{"Quill 004216", []string{"quill", "004216"}},
		{"bob@Acme.example", []string{"bob", "acme", "example"}},
		{`"quoted" OR -not`, []string{"quoted", "or", "not"}},
		{"FR-12_345", []string{"fr", "12", "345"}},
		{"Zoë Café", []string{"zoë", "café"}},
	} {
		got := graph.SearchTerms(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("SearchTerms(%q) = %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("SearchTerms(%q) = %q, want %q", tc.in, got, tc.want)
				break
			}
		}
	}
	many := graph.SearchTerms("a b c d e f g h i j k l m n o p q r s t")
	if len(many) != graph.MaxSearchTerms {
		t.Errorf("20 words give %d terms, want %d", len(many), graph.MaxSearchTerms)
	}
	long := graph.SearchTerms("é" + strings.Repeat("x", 100))
	if len(long) != 1 || len(long[0]) > graph.MaxSearchTermBytes {
		t.Errorf("a 101-rune word gives %q, want one term of at most %d bytes", long, graph.MaxSearchTermBytes)
	}
}
