package byid

import (
	"slices"
	"testing"
	"time"
)

type item struct{ id, v string }

func TestInOrder(t *testing.T) {
	found := []item{{"b", "b1"}, {"a", "a1"}, {"b", "b2"}, {"x", "x1"}}
	got := InOrder([]string{"a", "missing", "b", "a"}, found, func(i item) string { return i.id })
	want := []item{{"a", "a1"}, {"b", "b2"}}
	if !slices.Equal(got, want) {
		t.Errorf("InOrder = %v, want %v (the ids' order, each once, the later of repeats, nothing for a missing id or one not asked for)", got, want)
	}
	if got := InOrder(nil, found, func(i item) string { return i.id }); len(got) != 0 {
		t.Errorf("no ids: %v", got)
	}
}

func TestNewest(t *testing.T) {
	type period struct {
		id string
		at time.Time
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	found := []period{{"r", day(3)}, {"q", day(1)}, {"r", day(5)}, {"r", day(4)}}
	got := Newest([]string{"r", "q"}, found, func(p period) string { return p.id }, func(p period) time.Time { return p.at })
	want := []period{{"r", day(5)}, {"q", day(1)}}
	if !slices.Equal(got, want) {
		t.Errorf("Newest = %v, want %v", got, want)
	}
	if found[2].at != day(5) || found[0].at != day(3) {
		t.Errorf("Newest reordered its argument: %v", found)
	}
}
