package knowledge

import (
	"context"

	"github.com/cairnkg/cairn/vector"
)

// storeIndex is the MemoryIndex of a Service's own memory store: context
// loading sees the collections and the newest memories the caller may read.
type storeIndex struct{ s *Service }

func (x storeIndex) Collections(ctx context.Context, c Caller) ([]MemoryCollection, error) {
	cols, err := x.s.MemoryCollections(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]MemoryCollection, 0, len(cols))
	for _, col := range cols {
		out = append(out, MemoryCollection{Name: col.Name, Count: col.Count})
	}
	return out, nil
}

func (x storeIndex) Recent(ctx context.Context, c Caller, n int) ([]MemorySummary, error) {
	cols, err := x.s.MemoryCollections(ctx, c)
	if err != nil || len(cols) == 0 {
		return nil, err
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	return x.recent(ctx, c, names, n)
}

// recent returns the caller's n newest memories of the collections names.
func (x storeIndex) recent(ctx context.Context, c Caller, names []string, n int) ([]MemorySummary, error) {
	types, err := x.s.memoryReadableTypes(ctx, c)
	if err != nil {
		return nil, err
	}
	res, err := x.s.memories.Search(ctx, vector.Query{
		Filter: vector.Filter{UserID: c.UserID, Collections: names, ReadableTypes: types},
		Sort:   vector.SortCreatedAt, Limit: min(n, vector.MaxLimit), NoTotal: true,
	})
	if err != nil {
		return nil, memoryError(err)
	}
	out := make([]MemorySummary, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, MemorySummary{
			ID: h.ID, Collection: h.Collection, Title: h.Title,
			Text: h.Text, CreatedAt: h.CreatedAt,
		})
	}
	return out, nil
}

// load returns what Collections and Recent return, reading the caller's
// collections once for both.
func (x storeIndex) load(ctx context.Context, c Caller, n int) ([]MemoryCollection, []MemorySummary, error) {
	cols, err := x.s.MemoryCollections(ctx, c)
	if err != nil || len(cols) == 0 {
		return nil, nil, err
	}
	out := make([]MemoryCollection, 0, len(cols))
	names := make([]string, len(cols))
	for i, col := range cols {
		out = append(out, MemoryCollection{Name: col.Name, Count: col.Count})
		names[i] = col.Name
	}
	recent, err := x.recent(ctx, c, names, n)
	return out, recent, err
}
