package statlist_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/statlist"
)

func TestListKeepsWhatWasAdded(t *testing.T) {
	for _, n := range []int{0, 1, 1023, 1024, 1025, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var l statlist.List
			var want []graph.EntityStat
			buf := make([]byte, 16) // reused, as a driver's row buffer is
			for i := range n {
				e := graph.EntityStat{ID: fmt.Sprint("ent_", i), ObservationCount: i, LastObservationAt: time.Unix(int64(i), 0).UTC()}
				typ := append(buf[:0], []string{"person", "company"}[i%2]...)
				e.Type = string(typ)
				var sig []byte
				if i%3 != 0 {
					sig = fmt.Appendf(nil, "sig-%d", i)
					e.TextSig = graph.TextSig(append([]byte(nil), sig...))
				}
				want = append(want, e)
				l.Add(graph.EntityStat{ID: e.ID, ObservationCount: e.ObservationCount, LastObservationAt: e.LastObservationAt, Type: "ignored", TextSig: []byte("ignored")}, typ, sig)
				clear(sig) // the caller's bytes are not kept
			}
			got := l.Stats()
			if got == nil {
				t.Fatal("Stats returned nil")
			}
			if n == 0 {
				want = []graph.EntityStat{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("stats (-want +got):\n%s", diff)
			}
			for i := range got {
				if len(got[i].TextSig) > 0 && cap(got[i].TextSig) != len(got[i].TextSig) {
					t.Fatalf("stat %d: a signature's slice has room an append would overwrite its neighbour with", i)
				}
			}
		})
	}
}

func TestDegreesCountsOnlyListedEntities(t *testing.T) {
	stats := []graph.EntityStat{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	d := statlist.NewDegrees(stats)
	typ := []byte("person")
	d.Add([]byte("a"), typ, 2)
	copy(typ, "compan") // the caller's bytes are not kept
	d.Add([]byte("a"), []byte("person"), 1)
	d.Add([]byte("b"), []byte("company"), 4)
	d.Add([]byte("zz"), []byte("person"), 9)
	d.Add([]byte("a"), []byte("company"), 5)
	want := []graph.EntityStat{
		{ID: "a", Degrees: []graph.Degree{{Type: "person", Count: 3}, {Type: "company", Count: 5}}},
		{ID: "b", Degrees: []graph.Degree{{Type: "company", Count: 4}}},
		{ID: "c"},
	}
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Fatalf("degrees (-want +got):\n%s", diff)
	}
}
