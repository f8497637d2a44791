package pgvector

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/vector"
)

// Nearest implements vector.Driver: an HNSW index scan with iterative
// scans, or an exact scan when the filter is selective (see the package
// documentation).
func (d *Driver) Nearest(ctx context.Context, q vector.VectorQuery) ([]vector.Scored, error) {
	dim := len(q.Vector)
	useIndex := dim <= maxIndexedDimension
	if useIndex && d.opts.ExactBelow >= 0 {
		n, err := d.countUpTo(ctx, q.Filter, dim, d.opts.ExactBelow+1)
		if err != nil {
			return nil, err
		}
		useIndex = n > d.opts.ExactBelow
	}
	if useIndex {
		out, complete, err := d.nearestIndexed(ctx, q)
		if err != nil || complete {
			return out, err
		}
	}
	return d.nearestExact(ctx, q)
}

// countUpTo counts the rows of dimension dim that pass f, stopping at
// limit.
func (d *Driver) countUpTo(ctx context.Context, f vector.Filter, dim, limit int) (int, error) {
	var b builder
	where := b.where(f)
	var n int
	err := d.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM memories m WHERE `+where+` AND m.dimension = `+
		strconv.Itoa(dim)+` LIMIT `+b.add(limit)+`) s`, b.args...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("vector/pgvector: search: %w", err)
	}
	return n, nil
}

// nearestIndexed asks the HNSW index of the query's dimension for the k
// nearest rows that pass the filter, then applies the similarity
// threshold. complete is false when the index returned fewer than k rows:
// its scan budget may have run out before the filter let k rows through,
// and only an exact scan can tell.
func (d *Driver) nearestIndexed(ctx context.Context, q vector.VectorQuery) (out []vector.Scored, complete bool, err error) {
	dim := strconv.Itoa(len(q.Vector))
	var b builder
	vec := b.add(pgv.NewVector(q.Vector))
	where := b.where(q.Filter)
	k := b.add(q.K)
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// One round trip: without arguments, Exec uses the simple protocol,
		// which takes several statements.
		ef := strconv.Itoa(max(d.opts.EfSearch, q.K))
		if _, err := tx.Exec(ctx, `SET LOCAL hnsw.ef_search = `+ef+`; SET LOCAL hnsw.iterative_scan = relaxed_order`); err != nil {
			return err
		}
		// relaxed_order may return rows slightly out of order; the outer
		// query sorts them again (pgvector's documented pattern).
		rows, err := tx.Query(ctx, `WITH nearest AS MATERIALIZED (
				SELECT m.id, m.embedding::vector(`+dim+`) <=> `+vec+`::vector(`+dim+`) AS distance
				FROM memories m WHERE `+where+` AND m.dimension = `+dim+`
				ORDER BY distance LIMIT `+k+`)
			SELECT id, distance FROM nearest ORDER BY distance, id`, b.args...)
		if err != nil {
			return err
		}
		var n int
		var s vector.Scored
		_, err = pgx.ForEachRow(rows, []any{&s.ID, &s.Score}, func() error {
			n++
			s.Score = 1 - s.Score
			if s.Score >= q.MinSimilarity {
				out = append(out, s)
			}
			return nil
		})
		complete = n == q.K
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("vector/pgvector: index search: %w", err)
	}
	return out, complete, nil
}

// nearestExact scans every row that passes the filter. Its distance
// expression has no cast, so it cannot match a partial index and the
// planner computes it for each row.
func (d *Driver) nearestExact(ctx context.Context, q vector.VectorQuery) ([]vector.Scored, error) {
	var b builder
	vec := b.add(pgv.NewVector(q.Vector))
	where := b.where(q.Filter)
	rows, err := d.pool.Query(ctx, `SELECT m.id, 1 - (m.embedding <=> `+vec+`) AS similarity
		FROM memories m WHERE `+where+` AND m.dimension = `+strconv.Itoa(len(q.Vector))+`
		AND (m.embedding <=> `+vec+`) <= `+b.add(1-q.MinSimilarity)+`
		ORDER BY m.embedding <=> `+vec+`, m.id LIMIT `+b.add(q.K), b.args...)
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: exact search: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[vector.Scored])
	if err != nil {
		return nil, fmt.Errorf("vector/pgvector: exact search: %w", err)
	}
	return out, nil
}
