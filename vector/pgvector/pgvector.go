// Package pgvector is the memory driver on PostgreSQL with the pgvector
// extension (see db/postgres for the pool and migrations/postgres for the
// schema).
//
// Vector search has three ways to answer, cheapest first for the filter
// at hand (see Driver.Nearest):
//
//   - A filter the planner expects to keep few rows (EXPLAIN, no rows
//     read) is answered by an exact scan of its first Options.ExactBelow+1
//     rows; when that was all of them, the answer is complete and exact.
//   - A broader filter goes to the HNSW index of the query's dimension (one
//     partial index per dimension, on a half-precision copy of the
//     normalised vectors, halfvec_cosine_ops; its candidates are re-ranked
//     by their exact distance) with pgvector 0.8's iterative scans
//     (hnsw.iterative_scan = relaxed_order, bounded by
//     hnsw.max_scan_tuples), which keep walking the graph until enough
//     rows pass the filter. The settings are SET LOCAL in the search's
//     transaction, with the planner's sequential and bitmap scans turned
//     off there: left to itself, the planner answers a filter keeping 10%
//     or 50% of the rows with a scan of all of them and a sort.
//   - The index's answer is redone by an exact scan of every matching row
//     when it comes back short (its scan budget ran out), so a search
//     always returns min(k, matching rows), or when the neighbourhood its
//     distances describe has too many dimensions for a graph search
//     (Options.MaxLID): on vectors without structure, uniformly spread
//     ones for instance, an HNSW graph misses most of the true nearest
//     rows, and only an exact scan keeps recall.
//
// Full text uses a generated tsvector column with a GIN index and BM25
// from term statistics that triggers keep; a query whose words match many rows ranks a bounded number
// of them (Options.TextCandidates).
package pgvector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/vector"
)

// Defaults of Options' zero values.
const (
	DefaultEfSearch = 100
	// DefaultExactBelow is where an exact scan stops paying off. On the
	// benchmark's 100,000 rows of 384 dimensions an exact scan reads
	// every matching row from the table, about one page each, while the
	// index reads a few thousand pages whatever the filter; and finding
	// out whether a filter keeps fewer rows costs scanning up to this
	// many, which every search with a broader filter pays.
	DefaultExactBelow = 2000
	// DefaultMaxScanTuples is pgvector's own default of
	// hnsw.max_scan_tuples: enough for a filter keeping 1% of the rows to
	// fill 100 results, and a bound on what a short answer costs.
	DefaultMaxScanTuples = 20000
	// DefaultMaxLID is the largest local intrinsic dimensionality at which
	// the index's answer is kept (see Options.MaxLID).
	DefaultMaxLID = 30
	// DefaultTextCandidates bounds the rows the text signal ranks.
	DefaultTextCandidates = 1000
)

// maxIndexedDimension is the largest dimension pgvector's HNSW index takes
// for the halfvec type; larger collections are always scanned exactly.
const maxIndexedDimension = 4000

// Options tune the driver. The zero value selects the defaults.
type Options struct {
	// EfSearch is hnsw.ef_search, the candidate list size of an index
	// scan: higher is slower and finds more true neighbours. 0 means
	// DefaultEfSearch; it is raised to the k of a search when lower.
	EfSearch int
	// ExactBelow is the largest number of rows a filter may allow for a
	// search to scan them exactly instead of using the index. 0 means
	// DefaultExactBelow; a negative value always uses the index when one
	// exists (tests use it to exercise the index path).
	ExactBelow int
	// MaxScanTuples is hnsw.max_scan_tuples, how many index entries an
	// iterative scan may visit before it gives up (and the search is
	// redone exactly). 0 means DefaultMaxScanTuples.
	MaxScanTuples int
	// MaxLID decides when the index's answer is redone exactly: when the
	// local intrinsic dimensionality of the query's neighbourhood,
	// estimated from the distances of the answer's rows, exceeds it (see
	// Driver.trusted). 0 means DefaultMaxLID; a negative value keeps every
	// full answer of the index.
	MaxLID float64
	// TextCandidates bounds the rows the text signal ranks: the rows that
	// contain every word of the query, and this many of those that
	// contain any. A query of common words would otherwise rank every
	// row that has one. 0 means DefaultTextCandidates; it is raised to
	// the k of a search when lower.
	TextCandidates int
}

// Driver implements vector.Driver on a pgx pool whose connections know
// pgvector's types (db/postgres registers them).
type Driver struct {
	pool *pgxpool.Pool
	opts Options
}

var _ vector.Driver = (*Driver)(nil)

// New returns a driver on pool. The caller keeps ownership of pool.
func New(pool *pgxpool.Pool, opts Options) *Driver {
	if opts.EfSearch == 0 {
		opts.EfSearch = DefaultEfSearch
	}
	if opts.ExactBelow == 0 {
		opts.ExactBelow = DefaultExactBelow
	}
	if opts.MaxScanTuples == 0 {
		opts.MaxScanTuples = DefaultMaxScanTuples
	}
	if opts.MaxLID == 0 {
		opts.MaxLID = DefaultMaxLID
	}
	if opts.TextCandidates == 0 {
		opts.TextCandidates = DefaultTextCandidates
	}
	return &Driver{pool: pool, opts: opts}
}

// Close implements vector.Driver; the pool belongs to the caller.
func (d *Driver) Close() error { return nil }

// Spaces implements vector.Driver.
func (d *Driver) Spaces(ctx context.Context, userID string, collections []string) (map[string]vector.Space, error) {
	rows, err := d.pool.Query(ctx, `SELECT collection, embedder, dimension FROM memory_spaces WHERE user_id = $1 AND collection = ANY($2)`,
		userID, collections)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: spaces: %w", err)
	}
	out := map[string]vector.Space{}
	var (
		c string
		s vector.Space
	)
	_, err = pgx.ForEachRow(rows, []any{&c, &s.Embedder, &s.Dimension}, func() error {
		out[c] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: spaces: %w", err)
	}
	return out, nil
}

// CreateSpace implements vector.Driver. A dimension seen for the first
// time gets its partial HNSW index.
func (d *Driver) CreateSpace(ctx context.Context, userID, collection string, s vector.Space) (vector.Space, error) {
	if err := d.ensureIndex(ctx, s.Dimension); err != nil {
		return vector.Space{}, err
	}
	// Two statements, not one: a statement's snapshot would not see the
	// row a concurrent caller committed while this insert waited on it.
	if _, err := d.pool.Exec(ctx, `INSERT INTO memory_spaces (user_id, collection, embedder, dimension, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, collection) DO NOTHING`,
		userID, collection, s.Embedder, s.Dimension, time.Now().UnixMicro()); err != nil {
		return vector.Space{}, fmt.Errorf("vector/pgvector: create space: %w", err)
	}
	var got vector.Space
	err := d.pool.QueryRow(ctx, `SELECT embedder, dimension FROM memory_spaces WHERE user_id = $1 AND collection = $2`,
		userID, collection).Scan(&got.Embedder, &got.Dimension)
	if err != nil {
		return vector.Space{}, fmt.Errorf("vector/pgvector: create space: %w", err)
	}
	return got, nil
}

// ensureIndex creates the partial HNSW index of a dimension unless it
// exists or the dimension is too large to index. The index holds the
// vectors in half precision (halfvec): half the pages of a float32 copy,
// and searches re-rank its candidates with the stored vectors (see
// migrations/postgres/015_memories_hnsw_halfvec.sql).
func (d *Driver) ensureIndex(ctx context.Context, dimension int) error {
	if dimension > maxIndexedDimension {
		return nil
	}
	_, err := d.pool.Exec(ctx, IndexStatement(dimension))
	if err != nil && !isDuplicate(err) {
		return fmt.Errorf("vector/pgvector: index for %d dimensions: %w", dimension, err)
	}
	return nil
}

// IndexStatement returns the statement that creates the HNSW index of the
// memories of a dimension, unless it exists. A benchmark that loads rows
// in bulk drops the index first and runs this afterwards.
func IndexStatement(dimension int) string {
	dim := strconv.Itoa(dimension)
	return `CREATE INDEX IF NOT EXISTS memories_hnsw_half_` + dim + ` ON memories USING hnsw ((l2_normalize(embedding)::halfvec(` + dim +
		`)) halfvec_cosine_ops) WHERE dimension = ` + dim
}

// IndexName returns the name of the HNSW index of a dimension.
func IndexName(dimension int) string { return "memories_hnsw_half_" + strconv.Itoa(dimension) }

// isDuplicate reports whether err says the object exists already, as a
// concurrent CREATE INDEX IF NOT EXISTS may.
func isDuplicate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07")
}

// Insert implements vector.Driver with one COPY, which is atomic.
func (d *Driver) Insert(ctx context.Context, ms []vector.Memory) error {
	return insertError(copyMemories(ctx, d.pool, ms))
}

// copier is a pool or a transaction.
type copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

func copyMemories(ctx context.Context, c copier, ms []vector.Memory) error {
	_, err := c.CopyFrom(ctx, pgx.Identifier{"memories"},
		append(slices.Clone(contentColumns), "dimension", "embedding"),
		pgx.CopyFromSlice(len(ms), func(i int) ([]any, error) {
			m := ms[i]
			return append(contentValues(m), len(m.Embedding), pgv.NewVector(m.Embedding)), nil
		}))
	return err
}

// contentColumns are the columns of a memory's content that memories and
// memory_versions share, in the order contentValues gives them.
var contentColumns = []string{"id", "user_id", "collection", "title", "text", "tags", "confidence", "metadata", "entity_ids", "source_id",
	"types", "created_at", "occurred_at"}

func contentValues(m vector.Memory) []any {
	return []any{m.ID, m.UserID, m.Collection, m.Title, m.Text, orEmpty(m.Tags), m.Confidence, orEmptyMap(m.Metadata),
		orEmpty(m.EntityIDs), m.SourceID, orEmpty(m.Types), m.CreatedAt.UnixMicro(), m.OccurredAt.UnixMicro()}
}

func insertError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		return fmt.Errorf("vector/pgvector: insert: %s: %w", pgErr.Detail, vector.ErrConflict)
	default:
		return fmt.Errorf("vector/pgvector: insert: %w", err)
	}
}

// Replace implements vector.Driver: in one transaction that holds the
// space's row, it deletes the given memories, copies them back with their
// new embeddings and records the new space; a row it did not delete (a
// save that raced it) rolls everything back.
func (d *Driver) Replace(ctx context.Context, userID, collection string, s vector.Space, ms []vector.Memory) error {
	if err := d.ensureIndex(ctx, s.Dimension); err != nil {
		return err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM memory_spaces WHERE user_id = $1 AND collection = $2 FOR UPDATE`, userID, collection); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memories WHERE user_id = $1 AND collection = $2 AND id = ANY($3)`, userID, collection, ids); err != nil {
			return err
		}
		var others int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM memories WHERE user_id = $1 AND collection = $2`, userID, collection).Scan(&others); err != nil {
			return err
		}
		if others > 0 {
			return fmt.Errorf("the collection has %d memories besides the %d given: %w", others, len(ms), vector.ErrConflict)
		}
		if err := insertError(copyMemories(ctx, tx, ms)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE memory_spaces SET embedder = $3, dimension = $4 WHERE user_id = $1 AND collection = $2`,
			userID, collection, s.Embedder, s.Dimension)
		return err
	})
	if err != nil {
		return fmt.Errorf("vector/pgvector: replace %s: %w", collection, err)
	}
	return nil
}

// AllCollections implements vector.Driver.
func (d *Driver) AllCollections(ctx context.Context) ([]vector.UserCollection, error) {
	rows, err := d.pool.Query(ctx, `SELECT user_id, collection, embedder, dimension FROM memory_spaces ORDER BY user_id, collection`)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: collections: %w", err)
	}
	var out []vector.UserCollection
	var c vector.UserCollection
	_, err = pgx.ForEachRow(rows, []any{&c.UserID, &c.Collection, &c.Space.Embedder, &c.Space.Dimension}, func() error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: collections: %w", err)
	}
	return out, nil
}

const memoryColumns = `m.id, m.user_id, m.collection, m.title, m.text, m.tags, m.confidence, m.metadata, m.entity_ids, m.source_id,
	m.types, m.created_at, m.occurred_at`

// scanMemories scans rows of memoryColumns, then extra; each is passed
// to each when set, else collected.
func scanMemories(rows pgx.Rows, each func(vector.Memory), extra ...any) ([]vector.Memory, error) {
	var out []vector.Memory
	var (
		m                 vector.Memory
		created, occurred int64
	)
	_, err := pgx.ForEachRow(rows, append([]any{&m.ID, &m.UserID, &m.Collection, &m.Title, &m.Text, &m.Tags, &m.Confidence, &m.Metadata,
		&m.EntityIDs, &m.SourceID, &m.Types, &created, &occurred}, extra...), func() error {
		m.CreatedAt = time.UnixMicro(created).UTC()
		m.OccurredAt = time.UnixMicro(occurred).UTC()
		if each != nil {
			each(m)
		} else {
			out = append(out, m)
		}
		m = vector.Memory{}
		return nil
	})
	return out, err
}

// Get implements vector.Driver.
func (d *Driver) Get(ctx context.Context, userID string, ids []string) ([]vector.Memory, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.user_id = $1 AND m.id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: get: %w", err)
	}
	ms, err := scanMemories(rows, nil)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: get: %w", err)
	}
	byID := make(map[string]vector.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]vector.Memory, 0, len(ms))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
			delete(byID, id)
		}
	}
	return out, nil
}

// Embeddings implements vector.Driver.
func (d *Driver) Embeddings(ctx context.Context, userID string, ids []string) (map[string][]float32, error) {
	rows, err := d.pool.Query(ctx, `SELECT id, embedding FROM memories WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: embeddings: %w", err)
	}
	out := make(map[string][]float32, len(ids))
	var (
		id  string
		vec pgv.Vector
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &vec}, func() error {
		out[id] = slices.Clone(vec.Slice())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: embeddings: %w", err)
	}
	return out, nil
}

// List implements vector.Driver.
func (d *Driver) List(ctx context.Context, q vector.ListQuery) ([]vector.Memory, int, error) {
	var b builder
	where := b.where(q.Filter)
	var total int
	if !q.NoTotal {
		if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM memories m WHERE `+where, b.args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("vector/pgvector: list: %w", err)
		}
	}
	dir := "DESC"
	if q.Ascending {
		dir = "ASC"
	}
	order := "m.created_at " + dir + ", m.id"
	if q.Sort == vector.SortConfidence {
		order = "m.confidence " + dir + " NULLS LAST, m.id"
	}
	if q.Sort == vector.SortOccurredAt {
		order = "m.occurred_at " + dir + ", m.id"
	}
	text := `SELECT ` + memoryColumns + ` FROM memories m WHERE ` + where + ` ORDER BY ` + order
	if q.Sort == vector.SortCreatedAt && !q.Ascending && len(q.Collections) > 1 {
		// The newest of several collections: each collection's newest
		// offset+limit through its (user, collection, created_at DESC,
		// id) index, merged, rather than every matching row sorted.
		b = builder{}
		names := b.add(q.Collections)
		text = `SELECT ` + memoryColumns + ` FROM unnest(` + names + `::text[]) AS c(name)
			CROSS JOIN LATERAL (SELECT ` + memoryColumns + ` FROM memories m WHERE ` + b.whereIn(q.Filter, "c.name") +
			` ORDER BY ` + order + ` LIMIT ` + b.add(q.Offset+q.Limit) + `) m ORDER BY ` + order
	}
	rows, err := d.pool.Query(ctx, text+` LIMIT `+b.add(q.Limit)+` OFFSET `+b.add(q.Offset), b.args...)
	if err != nil {
		return nil, 0, fmt.Errorf("vector/pgvector: list: %w", err)
	}
	ms, err := scanMemories(rows, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("vector/pgvector: list: %w", err)
	}
	return ms, total, nil
}

// Collections implements vector.Driver.
func (d *Driver) Collections(ctx context.Context, userID string, readableTypes []string) ([]vector.Collection, error) {
	var readable any // NULL: every memory counts
	if readableTypes != nil {
		readable = readableTypes
	}
	rows, err := d.pool.Query(ctx, `SELECT s.collection, s.embedder, s.dimension,
		(SELECT count(*) FROM memories m WHERE m.user_id = s.user_id AND m.collection = s.collection
			AND ($2::text[] IS NULL OR m.types <@ $2::text[]))
		FROM memory_spaces s WHERE s.user_id = $1 ORDER BY s.collection`, userID, readable)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: collections: %w", err)
	}
	var out []vector.Collection
	var c vector.Collection
	_, err = pgx.ForEachRow(rows, []any{&c.Name, &c.Space.Embedder, &c.Space.Dimension, &c.Count}, func() error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: collections: %w", err)
	}
	return out, nil
}

// MatchText implements vector.Driver with the tsvector column and BM25.
// It ranks the rows that contain every term and up to
// Options.TextCandidates of those that contain any, so that the cost of a
// query of common words is bounded: ranking reads each candidate's row.
// When fewer rows match, that is all of them and the ranking is exact.
func (d *Driver) MatchText(ctx context.Context, q vector.TextQuery) ([]vector.Scored, error) {
	sql, args := d.textQuery(q)
	rows, err := d.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: text search: %w", err)
	}
	type candidate struct {
		id, text string
		score    float64
	}
	var (
		cands        []candidate
		id, text, tv string
		lexemes      []string
		idfs         []float64
		avgdl        float64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &text, &tv, &lexemes, &idfs, &avgdl}, func() error {
		tf, length := tsvCounts(tv)
		var score float64
		for k, lex := range lexemes {
			if f := float64(tf[lex]); f > 0 {
				score += idfs[k] * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(length)/avgdl))
			}
		}
		cands = append(cands, candidate{id, text, score})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: text search: %w", err)
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.text, b.text), strings.Compare(a.id, b.id))
	})
	out := make([]vector.Scored, min(len(cands), q.K))
	for i := range out {
		out[i] = vector.Scored{ID: cands[i].id, Score: cands[i].score}
	}
	return out, nil
}

// tsvCounts reads PostgreSQL's text form of a tsvector ('lex':1,4B
// 'other':2) into each lexeme's number of positions, and their sum, BM25's
// document length (a lexeme without positions counts once).
func tsvCounts(s string) (map[string]int, int) {
	tf := map[string]int{}
	total := 0
	for i := 0; i < len(s); {
		if s[i] != '\'' {
			i++
			continue
		}
		// A quoted lexeme: '' and \\ stand for ' and \.
		var lex strings.Builder
		for i++; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				lex.WriteByte(s[i])
				continue
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					lex.WriteByte('\'')
					continue
				}
				i++
				break
			}
			lex.WriteByte(s[i])
		}
		n := 1
		if i < len(s) && s[i] == ':' {
			n = 1
			for i++; i < len(s) && s[i] != ' '; i++ {
				if s[i] == ',' {
					n++
				}
			}
		}
		tf[lex.String()] += n
		total += n
	}
	return tf, total
}

// BM25's parameters, the usual ones (Lucene's and FTS5's).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// textQuery returns MatchText's statement and its arguments.
//
// The score, computed by MatchText, is Okapi BM25 over the query's
// lexemes (as the english configuration stems them): idf ln(1 + (N - df + 0.5) / (df + 0.5)) from
// the term statistics of the searched collections (memory_terms and
// memory_text_stats, which triggers keep; migrations/postgres/
// 026_memory_terms.sql), term frequency from the tsvector's positions,
// length normalised by the collections' mean length. The statistics are
// the collections', not the filter's: a filter narrows the rows, not the
// weight of a word.
//
// The statement returns the candidates with their tsvectors as text and
// the statistics (the query's lexemes, their idf, the mean length), and
// MatchText computes the scores: scoring in SQL, an unnest of each
// candidate's tsvector joined with the lexemes, took 14 of 16 ms for 1,000
// candidates, and reading the text form in Go a small part of that. The
// statistics are MATERIALIZED so that they are computed once.
//
// The tsqueries are functions in FROM, each computed once per execution.
// Written inline, as in m.tsv @@ to_tsquery('english', $1), they are
// computed once only in a plan made for the statement's values, where the
// planner folds them into constants; the pool's prepared statements get
// a generic plan after five executions, and in it to_tsquery, which
// parses and stems its text, runs again for every row tested and every row
// ranked: 60 to 230 ms instead of 15 at 10,000 rows.
func (d *Driver) textQuery(q vector.TextQuery) (string, []any) {
	var b builder
	anyTerm := b.add(strings.Join(q.Terms, " | "))
	where := b.where(q.Filter)
	limit := b.add(max(d.opts.TextCandidates, q.K))
	candidates := func(from, match string) string {
		return `(SELECT m.id, m.text, m.tsv FROM ` + from + `, memories m WHERE m.tsv @@ ` + match + ` AND ` + where + ` LIMIT ` + limit + `)`
	}
	anyQuery := `to_tsquery('english', ` + anyTerm + `) anyq`
	union := candidates(anyQuery, "anyq")
	if len(q.Terms) > 1 {
		union = candidates(anyQuery+`, to_tsquery('english', `+b.add(strings.Join(q.Terms, " & "))+`) allq`, "allq") + ` UNION ALL ` + union
	}
	user, colls := b.add(q.UserID), b.add(q.Collections)
	words := b.add(strings.Join(q.Terms, " "))
	return `WITH cand AS (SELECT DISTINCT ON (id) id, text, tsv FROM (` + union + `) c),
		st AS MATERIALIZED (SELECT greatest(coalesce(sum(docs), 0), 1)::float8 AS n,
			greatest(coalesce(sum(lexemes), 0)::float8 / greatest(coalesce(sum(docs), 0), 1), 1) AS avgdl
			FROM memory_text_stats WHERE user_id = ` + user + ` AND collection = ANY(` + colls + `)),
		w AS MATERIALIZED (SELECT ql.lexeme, ln(1 + (st.n - coalesce(t.df, 0) + 0.5) / (coalesce(t.df, 0) + 0.5)) AS idf
			FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', ` + words + `))) ql CROSS JOIN st
			LEFT JOIN LATERAL (SELECT sum(docs)::float8 AS df FROM memory_terms t
				WHERE t.user_id = ` + user + ` AND t.collection = ANY(` + colls + `) AND t.lexeme = ql.lexeme) t ON true)
		SELECT c.id, c.text, c.tsv::text, (SELECT array_agg(lexeme) FROM w), (SELECT array_agg(idf) FROM w), st.avgdl
		FROM cand c, st`, b.args
}

// builder collects the positional arguments of one statement.
type builder struct{ args []any }

// add appends v and returns its placeholder.
func (b *builder) add(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// where returns the condition, on memories aliased m, of f.
func (b *builder) where(f vector.Filter) string {
	return b.whereIn(f, "ANY("+b.add(f.Collections)+")")
}

// whereIn is where with the collection equal to the SQL expression in
// rather than to one of f.Collections.
func (b *builder) whereIn(f vector.Filter, in string) string {
	conds := []string{"m.collection = " + in, "m.user_id = " + b.add(f.UserID)}
	if len(f.Tags) > 0 {
		conds = append(conds, "m.tags @> "+b.add(f.Tags)+"::text[]")
	}
	if f.EntityID != "" {
		conds = append(conds, "m.entity_ids @> ARRAY["+b.add(f.EntityID)+"::text]")
	}
	if len(f.Keywords) > 0 {
		conds = append(conds, "m.tsv @@ to_tsquery('english', "+b.add(strings.Join(f.Keywords, " & "))+")")
	}
	if !f.OccurredFrom.IsZero() {
		conds = append(conds, "m.occurred_at >= "+b.add(f.OccurredFrom.UnixMicro()))
	}
	if !f.OccurredTo.IsZero() {
		conds = append(conds, "m.occurred_at <= "+b.add(f.OccurredTo.UnixMicro()))
	}
	if f.MinConfidence != nil {
		conds = append(conds, "m.confidence >= "+b.add(*f.MinConfidence))
	}
	if f.SourceID != "" {
		conds = append(conds, "m.source_id = "+b.add(f.SourceID))
	}
	for k, v := range f.Metadata {
		conds = append(conds, "m.metadata ->> "+b.add(k)+" = "+b.add(v))
	}
	if f.ReadableTypes != nil {
		// Empty, the array admits only memories of no type ('{}').
		conds = append(conds, "m.types <@ "+b.add(f.ReadableTypes)+"::text[]")
	}
	return strings.Join(conds, " AND ")
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
