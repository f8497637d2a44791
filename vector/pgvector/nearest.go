package pgvector

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/vector"
)

// Nearest implements vector.Driver. It tries, in order, what is cheapest
// for the filter at hand (see the package documentation):
//
//  1. when the planner expects the filter to keep few rows, an exact scan
//     of the first ExactBelow+1 rows that pass it: when no more rows pass,
//     its answer is complete and exact;
//  2. otherwise an HNSW index scan with iterative scans, whose answer is
//     kept when it is full and the neighbourhood it describes is one a
//     graph search finds its way in (see trusted);
//  3. otherwise an exact scan of every row that passes the filter.
func (d *Driver) Nearest(ctx context.Context, q vector.VectorQuery) ([]vector.Scored, error) {
	indexed := len(q.Vector) <= maxIndexedDimension
	if indexed && d.opts.ExactBelow >= 0 {
		est, err := d.estimate(ctx, q.Filter, len(q.Vector))
		if err != nil {
			return nil, err
		}
		if est <= broadFactor*float64(d.opts.ExactBelow) {
			out, n, err := d.nearestFirst(ctx, q, d.opts.ExactBelow+1, est <= 1)
			if err != nil || n <= d.opts.ExactBelow {
				return out, err
			}
		}
	}
	if indexed {
		out, ok, err := d.nearestIndexed(ctx, q)
		if err != nil || ok {
			return out, err
		}
	}
	return d.nearestExact(ctx, q)
}

// broadFactor is how many times ExactBelow rows the planner must expect a
// filter to keep for a search to go straight to the index. Below that,
// nearestFirst finds out: the planner's estimates of tag and date filters
// are close, but those of metadata and combined filters can be far off.
// A wrong guess costs time, never rows: a filter that keeps fewer rows
// than expected leaves the index short, and the search is redone exactly.
const broadFactor = 4

// estimate returns the planner's estimate of the rows of dimension dim
// that pass f: one round trip, no rows read.
func (d *Driver) estimate(ctx context.Context, f vector.Filter, dim int) (float64, error) {
	var b builder
	where := b.where(f)
	var plan []byte
	// An unnamed statement is planned with its arguments' values; a
	// cached one may get a generic plan, estimated without them.
	args := append([]any{pgx.QueryExecModeExec}, b.args...)
	if err := d.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM memories m WHERE `+where+` AND m.dimension = `+strconv.Itoa(dim),
		args...).Scan(&plan); err != nil {
		return 0, fmt.Errorf("vector/pgvector: search: estimate: %w", err)
	}
	var p []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := json.Unmarshal(plan, &p); err != nil || len(p) != 1 {
		return 0, fmt.Errorf("vector/pgvector: search: estimate: unexpected plan %.200s", plan)
	}
	return p[0].Plan.Rows, nil
}

// nearestFirst reads the first limit rows that pass the filter and, when
// there are fewer, returns the nearest of them: its answer is then
// complete and exact. It returns how many rows it read. One statement, so
// that the selective filters it answers cost one round trip.
//
// Blind is for an estimate of one row, which PostgreSQL gives every filter
// of a table without statistics (its estimates are clamped to at least
// one row): the statement then computes distances only once it knows
// fewer than limit rows pass, so that a filter that keeps more costs what
// counting them does. Otherwise it computes each row's distance as it
// reads it, which is cheaper for the selective filters the estimate sends
// here (0.7 against 0.9 ms at 0.1%, 1.8 against 2.5–3.5 ms at 1% on the
// clustered benchmark) and costs reading 2,001 vectors when the estimate
// was wrong: 6.5 ms at 512 dimensions, each vector a TOAST fetch, against
// 1.1 ms blind, at 10,000 rows without statistics.
func (d *Driver) nearestFirst(ctx context.Context, q vector.VectorQuery, limit int, blind bool) (out []vector.Scored, n int, err error) {
	sql, args := firstQuery(q, limit, blind)
	rows, err := d.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("vector/pgvector: search: %w", err)
	}
	var (
		id       *string
		distance *float64
	)
	_, err = pgx.ForEachRow(rows, []any{&n, &id, &distance}, func() error {
		if id != nil {
			out = append(out, vector.Scored{ID: *id, Score: 1 - *distance})
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("vector/pgvector: search: %w", err)
	}
	return out, n, nil
}

// firstQuery returns nearestFirst's statement and its arguments. Each
// distance is computed once, in a CTE that the outer query filters and
// sorts on. Blind, the candidates' vectors are kept as stored (a vector
// stored out of line stays a pointer to it) and their distances computed
// only when the count (an InitPlan, computed once) is below limit.
func firstQuery(q vector.VectorQuery, limit int, blind bool) (string, []any) {
	var b builder
	vec := b.add(pgv.NewVector(q.Vector))
	lim := b.add(limit)
	where := b.where(q.Filter) + ` AND m.dimension = ` + strconv.Itoa(len(q.Vector))
	cand := `cand AS MATERIALIZED (
			SELECT m.id, m.embedding <=> ` + vec + ` AS distance FROM memories m WHERE ` + where + ` LIMIT ` + lim + `),
		n AS (SELECT count(*) AS n FROM cand),
		dist AS (SELECT id, distance FROM cand)`
	if blind {
		cand = `cand AS MATERIALIZED (SELECT m.id, m.embedding FROM memories m WHERE ` + where + ` LIMIT ` + lim + `),
		n AS (SELECT count(*) AS n FROM cand),
		dist AS MATERIALIZED (SELECT id, embedding <=> ` + vec + ` AS distance FROM cand WHERE (SELECT n FROM n) < ` + lim + `)`
	}
	return `WITH ` + cand + `,
		top AS (SELECT id, distance FROM dist WHERE distance <= ` + b.add(1-q.MinSimilarity) + ` ORDER BY distance, id LIMIT ` + b.add(q.K) + `)
		SELECT n.n, top.id, top.distance FROM n LEFT JOIN top ON true ORDER BY top.distance, top.id`, b.args
}

// nearestIndexed asks the HNSW index of the query's dimension for the k
// nearest rows that pass the filter, then applies the similarity
// threshold. ok is false when the answer cannot be kept: the index
// returned fewer than k rows (its scan budget may have run out before the
// filter let k rows through, and only an exact scan can tell), or the
// neighbourhood its rows describe has too many dimensions for a graph
// search to be trusted (see trusted).
func (d *Driver) nearestIndexed(ctx context.Context, q vector.VectorQuery) (out []vector.Scored, ok bool, err error) {
	sql, args := indexedQuery(q)
	var scanned int
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, set := range d.indexSettings(q.K) {
			batch.Queue(set)
		}
		batch.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			var s vector.Scored
			_, err := pgx.ForEachRow(rows, []any{&s.ID, &s.Score}, func() error {
				scanned++
				s.Score = 1 - s.Score
				out = append(out, s)
				return nil
			})
			return err
		})
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, false, fmt.Errorf("vector/pgvector: index search: %w", err)
	}
	if scanned < q.K || !d.trusted(out) {
		return nil, false, nil
	}
	kept := out[:0]
	for _, s := range out {
		if s.Score >= q.MinSimilarity { // false for NaN
			kept = append(kept, s)
		}
	}
	return kept, true, nil
}

// indexSettings returns the SET LOCAL statements that leave the planner
// the HNSW index for an index search of k rows.
//
// The planner would answer a broad filter with a scan of every matching
// row and a sort (an exact search, slow at this size), and it does so
// whenever it believes the filter keeps few rows, as it does for every
// filter on a table that was never analysed (no statistics: autovacuum
// off, or a table just loaded): it then sorts every matching row by the
// half-precision distance, normalising each row's vector and reading it
// twice. A search gets here only when the filter keeps more rows than an
// exact scan is worth (Nearest), so sequential and bitmap scans and sorts
// are all turned off for its one statement: the only plan left without a
// sort below the limit is the ordered scan of the HNSW index. The sort of
// the k rows returned remains, since no plan avoids it; so that its
// penalty cost (every disabled step adds 10^10 to the plan's estimate)
// does not make PostgreSQL compile the statement with JIT, which takes
// 70 to 200 ms and never pays for a statement that reads k rows, JIT is
// off too. relaxed_order may return rows slightly out of order; the
// outer query sorts them again (pgvector's documented pattern).
func (d *Driver) indexSettings(k int) []string {
	return []string{
		`SET LOCAL hnsw.ef_search = ` + strconv.Itoa(max(d.opts.EfSearch, k)),
		`SET LOCAL hnsw.iterative_scan = relaxed_order`,
		`SET LOCAL hnsw.max_scan_tuples = ` + strconv.Itoa(d.opts.MaxScanTuples),
		`SET LOCAL enable_seqscan = off`,
		`SET LOCAL enable_bitmapscan = off`,
		`SET LOCAL enable_sort = off`,
		`SET LOCAL jit = off`,
	}
}

// indexedQuery returns the statement of an index search and its
// arguments. The index orders by the half-precision distance of the
// normalised vectors (halfvec holds at most 65,504); the exact one,
// computed for the k rows returned, is what the search reports and sorts
// by.
func indexedQuery(q vector.VectorQuery) (string, []any) {
	dim := strconv.Itoa(len(q.Vector))
	var b builder
	vec := b.add(pgv.NewVector(q.Vector)) + "::vector"
	where := b.where(q.Filter)
	return `WITH nearest AS MATERIALIZED (
			SELECT m.id, m.embedding <=> ` + vec + ` AS distance
			FROM memories m WHERE ` + where + ` AND m.dimension = ` + dim + `
			ORDER BY l2_normalize(m.embedding)::halfvec(` + dim + `) <=> l2_normalize(` + vec + `)::halfvec(` + dim + `) LIMIT ` + b.add(q.K) + `)
		SELECT id, distance FROM nearest ORDER BY distance, id`, b.args
}

// minLIDRows is the fewest rows trusted estimates a dimensionality from.
const minLIDRows = 20

// trusted reports whether the index's answer, nearest first by exact
// distance, can be kept: whether the local intrinsic dimensionality of the
// query's neighbourhood, estimated from the answer's distances, is at most
// Options.MaxLID.
//
// An HNSW graph finds a query's neighbours reliably when they lie in a
// space of few effective dimensions, as real embeddings' do; where the
// neighbourhood has as many as the vectors themselves (uniformly spread
// vectors: in 384 dimensions the 100 nearest of 100,000 rows are barely
// nearer than the median one), its greedy search misses most of them at
// any affordable ef_search, and only an exact scan finds them. The
// estimate is the maximum-likelihood one of Levina and Bickel over the k
// nearest distances d_1 ≤ … ≤ d_k: -1 / mean(ln(d_i / d_k)), i < k. On the
// benchmark's data it is 1 to 9 for clustered vectors, with or without a
// filter, and 46 to 74 for uniform ones. That queries of higher local
// intrinsic dimensionality are harder for approximate indexes is what
// Aumüller and Ceccarello measured ("The role of local intrinsic
// dimensionality in benchmarking nearest neighbor search", 2019); the
// threshold is this benchmark's, not theirs.
func (d *Driver) trusted(out []vector.Scored) bool {
	if d.opts.MaxLID < 0 || len(out) < minLIDRows {
		return true
	}
	far := 1 - out[len(out)-1].Score
	if !(far > 0) {
		return true // duplicates of the query, or no distance to compare
	}
	var sum float64
	n := 0
	for _, s := range out[:len(out)-1] {
		if near := 1 - s.Score; near > 0 && near < far {
			sum += math.Log(near / far)
			n++
		}
	}
	if n == 0 || sum == 0 {
		return false // every distance equal: nothing stands out
	}
	return -float64(n)/sum <= d.opts.MaxLID
}

// nearestExact scans every row that passes the filter. Its distance
// expression has no cast, so it cannot match a partial index, and it is
// computed once per row: the query orders by the output column, which a
// condition on the distance would compute again (the planner does not
// share expressions between a condition and the output). The threshold is
// applied to the result instead, which is the same: it is sorted by
// distance, so the rows within the threshold are a prefix of it.
//
// The statement is planned for each search's values (an unnamed
// statement, as estimate's), never from the pool's cache of prepared
// statements: after five executions a prepared statement may get a
// generic plan, made without knowing how many rows the filter keeps, and
// for a tag that half the rows carry that plan read them through the tag
// index one heap page at a time, with no parallel workers: 94 to 113 ms
// against 49 ms for the parallel scan planned for the value (100,000
// memories of 384 dimensions). Planning costs a fraction of a
// millisecond, against a scan of thousands of rows.
func (d *Driver) nearestExact(ctx context.Context, q vector.VectorQuery) ([]vector.Scored, error) {
	var b builder
	vec := b.add(pgv.NewVector(q.Vector))
	where := b.where(q.Filter)
	sql := `SELECT m.id, m.embedding <=> ` + vec + ` AS distance FROM memories m
		WHERE ` + where + ` AND m.dimension = ` + strconv.Itoa(len(q.Vector)) + `
		ORDER BY distance, m.id LIMIT ` + b.add(q.K)
	rows, err := d.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, b.args...)...)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: exact search: %w", err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[vector.Scored])
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: exact search: %w", err)
	}
	out := all[:0]
	for _, s := range all {
		// NaN, the distance of a zero vector, sorts last and stops here too.
		if s.Score = 1 - s.Score; !(s.Score >= q.MinSimilarity) {
			break
		}
		out = append(out, s)
	}
	return out, nil
}
