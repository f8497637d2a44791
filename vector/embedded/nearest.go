package embedded

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/internal/dot"
)

// shardKey names one user's collection.
type shardKey struct{ user, collection string }

// shard is the cached vectors of one collection, in seq order.
type shard struct {
	mu     sync.RWMutex
	maxSeq int64
	// removals is the collection's count of removed rows (retracted,
	// erased or updated ones) the cache was loaded at; another count means
	// rows left from the middle: start over.
	removals int64
	dim      int
	seqs     []int64
	ids      []string
	occurred []int64   // OccurredAt, Unix microseconds
	conf     []float64 // NaN when the memory has none
	norms    []float32
	vecs     []float32 // len(seqs) * dim
	sources  []string
	// types are each row's Types, nil when it has none.
	types [][]string
	// byTag and byEntity list, for each tag and linked entity, the
	// indexes of its rows in ascending order, so that the most common
	// filters need no SQL.
	byTag, byEntity map[string][]int32
}

// reset empties the cache of a replaced collection. The caller holds
// sh.mu for writing.
func (sh *shard) reset() {
	sh.maxSeq, sh.dim, sh.removals = 0, 0, 0
	sh.seqs, sh.ids, sh.occurred, sh.conf, sh.norms, sh.vecs, sh.sources, sh.types = nil, nil, nil, nil, nil, nil, nil, nil
	sh.byTag, sh.byEntity = nil, nil
}

// shard returns the cache of a collection, topped up with the rows
// committed since it was last read.
func (d *Driver) shard(ctx context.Context, userID, collection string) (*shard, error) {
	k := shardKey{userID, collection}
	d.mu.Lock()
	sh, ok := d.shards[k]
	if !ok {
		sh = &shard{}
		d.shards[k] = sh
	}
	d.mu.Unlock()

	var bottom, top, removals int64
	// Separate subqueries: SQLite answers a lone min() or max() with one
	// index seek, but both in one query with a scan of the collection.
	if err := d.db.Read.QueryRowContext(ctx, `SELECT
		coalesce((SELECT min(seq) FROM memories WHERE user_id = ?1 AND collection = ?2), 0),
		coalesce((SELECT max(seq) FROM memories WHERE user_id = ?1 AND collection = ?2), 0),
		coalesce((SELECT removals FROM memory_spaces WHERE user_id = ?1 AND collection = ?2), 0)`,
		userID, collection).Scan(&bottom, &top, &removals); err != nil {
		return nil, fmt.Errorf("vector/embedded: cache: %w", err)
	}
	// A lowest seq the cache does not start with means the collection was
	// replaced, another count of removals that rows left it: start over.
	stale := func() bool { return (len(sh.seqs) > 0 && sh.seqs[0] != bottom) || sh.removals != removals }
	sh.mu.RLock()
	fresh := sh.maxSeq >= top && !stale()
	sh.mu.RUnlock()
	if fresh {
		return sh, nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if stale() {
		sh.reset()
		sh.removals = removals
	}
	if sh.maxSeq >= top {
		return sh, nil
	}
	if sh.byTag == nil {
		sh.byTag, sh.byEntity = map[string][]int32{}, map[string][]int32{}
	}
	rows, err := d.db.Read.QueryContext(ctx, `SELECT seq, id, occurred_at, confidence, source_id, tags, entity_ids, types, embedding FROM memories
		WHERE user_id = ? AND collection = ? AND seq > ? AND seq <= ? ORDER BY seq`, userID, collection, sh.maxSeq, top)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: cache: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq, created      int64
			id, source        string
			tags, ents, types string
			conf              *float64
			emb               []byte
		)
		if err := rows.Scan(&seq, &id, &created, &conf, &source, &tags, &ents, &types, &emb); err != nil {
			return nil, fmt.Errorf("vector/embedded: cache: %w", err)
		}
		var tagList, entList, typeList []string
		if err := errors.Join(json.Unmarshal([]byte(tags), &tagList), json.Unmarshal([]byte(ents), &entList),
			json.Unmarshal([]byte(types), &typeList)); err != nil {
			return nil, fmt.Errorf("vector/embedded: cache: memory %s: %w", id, err)
		}
		dim := len(emb) / 4
		if sh.dim == 0 {
			sh.dim = dim
		} else if dim != sh.dim {
			return nil, fmt.Errorf("vector/embedded: memory %s has %d dimensions, its collection %d", id, dim, sh.dim)
		}
		var ss float64
		for i := range dim {
			x := math.Float32frombits(binary.LittleEndian.Uint32(emb[4*i:]))
			sh.vecs = append(sh.vecs, x)
			ss += float64(x) * float64(x)
		}
		c := math.NaN()
		if conf != nil {
			c = *conf
		}
		sh.seqs = append(sh.seqs, seq)
		sh.ids = append(sh.ids, id)
		sh.occurred = append(sh.occurred, created)
		sh.conf = append(sh.conf, c)
		sh.norms = append(sh.norms, float32(math.Sqrt(ss)))
		sh.sources = append(sh.sources, source)
		if len(typeList) == 0 {
			typeList = nil
		}
		sh.types = append(sh.types, typeList)
		ix := int32(len(sh.seqs) - 1)
		for _, t := range uniq(tagList) {
			sh.byTag[t] = append(sh.byTag[t], ix)
		}
		for _, e := range uniq(entList) {
			sh.byEntity[e] = append(sh.byEntity[e], ix)
		}
		sh.maxSeq = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: cache: %w", err)
	}
	sh.maxSeq = top
	return sh, nil
}

// Nearest implements vector.Driver with an exact scan of the cache.
func (d *Driver) Nearest(ctx context.Context, q vector.VectorQuery) ([]vector.Scored, error) {
	var allowed map[string][]int64 // by collection, ascending; nil means every row
	if needsSQL(q.Filter) {
		var err error
		if allowed, err = d.allowedSeqs(ctx, q.Filter); err != nil {
			return nil, err
		}
	}
	var qn float64
	for _, x := range q.Vector {
		qn += float64(x) * float64(x)
	}
	qnorm := float32(math.Sqrt(qn))
	top := &topK{k: q.K}
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.OccurredFrom.IsZero() {
		from = q.OccurredFrom.UnixMicro()
	}
	if !q.OccurredTo.IsZero() {
		to = q.OccurredTo.UnixMicro()
	}
	for _, c := range q.Collections {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("vector/embedded: search: %w", err)
		}
		sh, err := d.shard(ctx, q.UserID, c)
		if err != nil {
			return nil, err
		}
		sh.mu.RLock()
		if sh.dim != 0 && sh.dim != len(q.Vector) {
			sh.mu.RUnlock()
			return nil, fmt.Errorf("vector/embedded: collection %q has %d dimensions, the query %d: %w",
				c, sh.dim, len(q.Vector), vector.ErrDimensionMismatch)
		}
		consider := func(i int, top *topK) {
			if sh.occurred[i] < from || sh.occurred[i] > to {
				return
			}
			if q.MinConfidence != nil && !(sh.conf[i] >= *q.MinConfidence) {
				return
			}
			if q.SourceID != "" && sh.sources[i] != q.SourceID {
				return
			}
			if !q.Filter.AdmitsTypes(sh.types[i]) {
				return
			}
			var sim float32
			if n := sh.norms[i]; n != 0 && qnorm != 0 {
				sim = dot.Product(q.Vector, sh.vecs[i*sh.dim:(i+1)*sh.dim]) / (n * qnorm)
			}
			if float64(sim) >= q.MinSimilarity {
				top.offer(float64(sim), sh.ids[i])
			}
		}
		// rows are the rows to consider, by position; nil means all.
		var rows []int32
		switch {
		case allowed == nil && (len(q.Tags) > 0 || q.EntityID != ""):
			rows = sh.indexed(q.Tags, q.EntityID)
			if rows == nil {
				rows = []int32{}
			}
		case allowed != nil:
			rows = sh.positions(allowed[c])
		}
		n := len(sh.seqs)
		if rows != nil {
			n = len(rows)
		}
		scanParts(n, d.splitRows, top, func(lo, hi int, top *topK) {
			for j := lo; j < hi; j++ {
				if rows == nil {
					consider(j, top)
				} else {
					consider(int(rows[j]), top)
				}
			}
		})
		sh.mu.RUnlock()
	}
	return top.sorted(), nil
}

// positions returns the positions in sh of the rows with these seqs, in
// ascending order. Rows committed after the cache was read are not there:
// the search sees the store as of that read. The caller holds sh.mu.
func (sh *shard) positions(seqs []int64) []int32 {
	out := make([]int32, 0, len(seqs))
	for _, seq := range seqs {
		if i, ok := slices.BinarySearch(sh.seqs, seq); ok {
			out = append(out, int32(i))
		}
	}
	return out
}

// parallelRows is the fewest rows to compare a query with that a search
// splits between processors: about 1 ms of work at 384 dimensions, below
// which starting goroutines costs more than it saves.
const parallelRows = 8192

// scanParts runs scan over rows [0, n): in one part, or, when there are
// at least two parts of minRows, in up to one part per processor, each
// with a top k of its own, merged into top. The k best rows under a strict order (score, then id)
// do not depend on the order rows are offered in, so the answer is the
// same either way.
func scanParts(n, minRows int, top *topK, scan func(lo, hi int, top *topK)) {
	parts := min(runtime.GOMAXPROCS(0), n/minRows)
	if parts < 2 {
		scan(0, n, top)
		return
	}
	tops := make([]topK, parts)
	var wg sync.WaitGroup
	for p := range parts {
		tops[p].k = top.k
		wg.Go(func() { scan(p*n/parts, (p+1)*n/parts, &tops[p]) })
	}
	wg.Wait()
	for _, t := range tops {
		for _, s := range t.h {
			top.offer(s.Score, s.ID)
		}
	}
}

// indexed returns the rows that have every tag and, when entityID is set,
// link to it, in ascending order. The caller holds sh.mu.
func (sh *shard) indexed(tags []string, entityID string) []int32 {
	var lists [][]int32
	for _, t := range tags {
		lists = append(lists, sh.byTag[t])
	}
	if entityID != "" {
		lists = append(lists, sh.byEntity[entityID])
	}
	slices.SortFunc(lists, func(a, b []int32) int { return cmp.Compare(len(a), len(b)) })
	out := lists[0]
	for _, l := range lists[1:] {
		var next []int32
		for _, i := range out {
			if _, ok := slices.BinarySearch(l, i); ok {
				next = append(next, i)
			}
		}
		out = next
	}
	return out
}

// allIn reports whether every element of s is one of set.
func uniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := make([]string, 0, len(s))
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// allowedSeqs resolves a filter to the rows it allows, per collection.
func (d *Driver) allowedSeqs(ctx context.Context, f vector.Filter) (map[string][]int64, error) {
	where, args := whereClause(f)
	rows, err := d.db.Read.QueryContext(ctx, `SELECT m.collection, m.seq FROM memories m WHERE `+where+` ORDER BY m.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: search: %w", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var c string
		var seq int64
		if err := rows.Scan(&c, &seq); err != nil {
			return nil, fmt.Errorf("vector/embedded: search: %w", err)
		}
		out[c] = append(out[c], seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: search: %w", err)
	}
	return out, nil
}

// topK keeps the k best (similarity descending, id ascending) rows offered.
type topK struct {
	k int
	h scoredHeap
}

func (t *topK) offer(sim float64, id string) {
	if len(t.h) < t.k {
		heap.Push(&t.h, vector.Scored{ID: id, Score: sim})
		return
	}
	if worse(t.h[0], vector.Scored{ID: id, Score: sim}) {
		t.h[0] = vector.Scored{ID: id, Score: sim}
		heap.Fix(&t.h, 0)
	}
}

func (t *topK) sorted() []vector.Scored {
	out := slices.Clone([]vector.Scored(t.h))
	slices.SortFunc(out, func(a, b vector.Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// worse reports whether a ranks below b.
func worse(a, b vector.Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// scoredHeap is a min-heap: the worst kept row on top.
type scoredHeap []vector.Scored

func (h scoredHeap) Len() int           { return len(h) }
func (h scoredHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h scoredHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)        { *h = append(*h, x.(vector.Scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
