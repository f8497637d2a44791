// Package embedded is the memory driver of Cairn's embedded store: memories
// live in the same SQLite file as everything else (see db/sqlite), with
// FTS5 for full text and an exact vector scan.
//
// The scan runs over an in-process cache that keeps each collection's
// vectors as contiguous float32s, loaded once and then topped up with the
// rows added since: a collection's rows are only ever appended (each row's
// seq is higher than every row committed before it) or all replaced
// (Replace, which gives every row a new seq above every earlier one), so
// the lowest and highest seq tell a reader, in any process, what changed. The cache holds the vectors of
// every collection searched since the process started, about 1.6 KB per
// 384-dimensional memory: sized for one person's or one team's memories,
// which is what the embedded store is for. A filter on columns the cache does not
// hold (keywords, metadata) is first resolved by SQLite to the rows it
// allows; tags and entity links are indexed in the cache itself, and each
// row's types (Filter.ReadableTypes) are kept there. Either way
// a selective filter scans only the rows it allows.
package embedded

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/vector"
)

// Driver implements vector.Driver on an open embedded store.
type Driver struct {
	db *sqlite.DB
	// writeMu queues this process's writers in Go rather than in SQLite's
	// busy handler, which polls.
	writeMu sync.Mutex

	mu     sync.Mutex
	shards map[shardKey]*shard

	// splitRows is the fewest rows a vector search splits between
	// processors (parallelRows; tests lower it).
	splitRows int
}

var _ vector.Driver = (*Driver)(nil)

// New returns a driver on db. The caller keeps ownership of db.
func New(db *sqlite.DB) *Driver {
	return &Driver{db: db, shards: map[shardKey]*shard{}, splitRows: parallelRows}
}

// Close implements vector.Driver; it drops the cache. The store itself
// belongs to the caller.
func (d *Driver) Close() error {
	d.mu.Lock()
	d.shards = map[shardKey]*shard{}
	d.mu.Unlock()
	return nil
}

// Spaces implements vector.Driver.
func (d *Driver) Spaces(ctx context.Context, userID string, collections []string) (map[string]vector.Space, error) {
	args := []any{userID}
	for _, c := range collections {
		args = append(args, c)
	}
	rows, err := d.db.Read.QueryContext(ctx, `SELECT collection, embedder, dimension FROM memory_spaces WHERE user_id = ? AND collection IN (`+
		placeholders(len(collections))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: spaces: %w", err)
	}
	defer rows.Close()
	out := map[string]vector.Space{}
	for rows.Next() {
		var c string
		var s vector.Space
		if err := rows.Scan(&c, &s.Embedder, &s.Dimension); err != nil {
			return nil, fmt.Errorf("vector/embedded: spaces: %w", err)
		}
		out[c] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: spaces: %w", err)
	}
	return out, nil
}

// CreateSpace implements vector.Driver.
func (d *Driver) CreateSpace(ctx context.Context, userID, collection string, s vector.Space) (vector.Space, error) {
	d.writeMu.Lock()
	_, err := d.db.Write.ExecContext(ctx, `INSERT INTO memory_spaces (user_id, collection, embedder, dimension, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, collection) DO NOTHING`,
		userID, collection, s.Embedder, s.Dimension, time.Now().UnixMicro())
	d.writeMu.Unlock()
	if err != nil {
		return vector.Space{}, fmt.Errorf("vector/embedded: create space: %w", err)
	}
	var got vector.Space
	err = d.db.Write.QueryRowContext(ctx, `SELECT embedder, dimension FROM memory_spaces WHERE user_id = ? AND collection = ?`,
		userID, collection).Scan(&got.Embedder, &got.Dimension)
	if err != nil {
		return vector.Space{}, fmt.Errorf("vector/embedded: create space: %w", err)
	}
	return got, nil
}

// Insert implements vector.Driver.
func (d *Driver) Insert(ctx context.Context, ms []vector.Memory) error {
	return d.write(ctx, func(tx *sql.Tx) error { return insert(ctx, tx, ms, 0) })
}

// write runs fn in one write transaction.
func (d *Driver) write(ctx context.Context, fn func(*sql.Tx) error) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	tx, err := d.db.Write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("vector/embedded: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("vector/embedded: commit: %w", err)
	}
	return nil
}

// insert stores ms. Their seqs follow after, when it is above 0; else
// SQLite chooses them, one above the highest in the table.
func insert(ctx context.Context, tx *sql.Tx, ms []vector.Memory, after int64) error {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO memories (seq, id, user_id, collection, title, text, tags, confidence, metadata,
		entity_ids, source_id, types, created_at, embedding, occurred_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`)
	if err != nil {
		return fmt.Errorf("vector/embedded: insert: %w", err)
	}
	defer ins.Close()
	tag, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO memory_tags (user_id, tag, seq) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("vector/embedded: insert: %w", err)
	}
	defer tag.Close()
	ent, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO memory_entities (user_id, entity_id, seq) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("vector/embedded: insert: %w", err)
	}
	defer ent.Close()
	for i, m := range ms {
		var given any // NULL: SQLite's choice
		if after > 0 {
			given = after + 1 + int64(i)
		}
		row, err := rowValues(m)
		if err != nil {
			return fmt.Errorf("vector/embedded: insert %s: %w", m.ID, err)
		}
		var seq int64
		err = ins.QueryRowContext(ctx, append([]any{given}, row...)...).Scan(&seq)
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("vector/embedded: insert %s: %w", m.ID, vector.ErrConflict)
			}
			return fmt.Errorf("vector/embedded: insert %s: %w", m.ID, err)
		}
		for _, t := range m.Tags {
			if _, err := tag.ExecContext(ctx, m.UserID, t, seq); err != nil {
				return fmt.Errorf("vector/embedded: insert %s: tags: %w", m.ID, err)
			}
		}
		for _, e := range m.EntityIDs {
			if _, err := ent.ExecContext(ctx, m.UserID, e, seq); err != nil {
				return fmt.Errorf("vector/embedded: insert %s: entities: %w", m.ID, err)
			}
		}
	}
	return nil
}

// rowValues returns m's values for the columns id, user_id, collection,
// title, text, tags, confidence, metadata, entity_ids, source_id, types,
// created_at, embedding, occurred_at, as memories and memory_versions
// store them.
func rowValues(m vector.Memory) ([]any, error) {
	tags, _ := json.Marshal(orEmpty(m.Tags))
	ents, _ := json.Marshal(orEmpty(m.EntityIDs))
	types, _ := json.Marshal(orEmpty(m.Types))
	meta, err := json.Marshal(orEmptyMap(m.Metadata))
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	return []any{m.ID, m.UserID, m.Collection, m.Title, m.Text, string(tags), m.Confidence, string(meta), string(ents), m.SourceID,
		string(types), m.CreatedAt.UnixMicro(), encodeVector(m.Embedding), m.OccurredAt.UnixMicro()}, nil
}

// Replace implements vector.Driver. The rows are deleted and inserted
// again with seqs above every seq the table held, so that every process's
// cache reloads the collection (see shard): left to SQLite, the seqs of
// rows deleted from the top of the table would be given again.
func (d *Driver) Replace(ctx context.Context, userID, collection string, s vector.Space, ms []vector.Memory) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		var top int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM memories`).Scan(&top); err != nil {
			return fmt.Errorf("vector/embedded: replace: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE user_id = ? AND collection = ?`, userID, collection)
		if err != nil {
			return fmt.Errorf("vector/embedded: replace: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(ms)) {
			return fmt.Errorf("vector/embedded: replace %s: the collection has %d memories, %d were given: %w",
				collection, n, len(ms), vector.ErrConflict)
		}
		if err := insert(ctx, tx, ms, top); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memory_spaces SET embedder = ?, dimension = ? WHERE user_id = ? AND collection = ?`,
			s.Embedder, s.Dimension, userID, collection); err != nil {
			return fmt.Errorf("vector/embedded: replace: %w", err)
		}
		return nil
	})
}

// AllCollections implements vector.Driver.
func (d *Driver) AllCollections(ctx context.Context) ([]vector.UserCollection, error) {
	rows, err := d.db.Read.QueryContext(ctx, `SELECT user_id, collection, embedder, dimension FROM memory_spaces ORDER BY user_id, collection`)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: collections: %w", err)
	}
	defer rows.Close()
	var out []vector.UserCollection
	for rows.Next() {
		var c vector.UserCollection
		if err := rows.Scan(&c.UserID, &c.Collection, &c.Space.Embedder, &c.Space.Dimension); err != nil {
			return nil, fmt.Errorf("vector/embedded: collections: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: collections: %w", err)
	}
	return out, nil
}

// isUnique reports whether err is SQLite's unique or primary key
// constraint error.
func isUnique(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		// SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY
		return coded.Code() == 2067 || coded.Code() == 1555
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

const memoryColumns = `m.id, m.user_id, m.collection, m.title, m.text, m.tags, m.confidence, m.metadata, m.entity_ids, m.source_id,
	m.types, m.created_at, m.occurred_at`

// scanMemory scans memoryColumns, then into extra.
func scanMemory(rows *sql.Rows, extra ...any) (vector.Memory, error) {
	var (
		m                       vector.Memory
		tags, meta, ents, types string
		conf                    sql.NullFloat64
		created, occurred       int64
	)
	if err := rows.Scan(append([]any{&m.ID, &m.UserID, &m.Collection, &m.Title, &m.Text, &tags, &conf, &meta, &ents, &m.SourceID, &types,
		&created, &occurred}, extra...)...); err != nil {
		return m, err
	}
	if conf.Valid {
		m.Confidence = &conf.Float64
	}
	m.CreatedAt = time.UnixMicro(created).UTC()
	m.OccurredAt = time.UnixMicro(occurred).UTC()
	if err := errors.Join(json.Unmarshal([]byte(tags), &m.Tags), json.Unmarshal([]byte(meta), &m.Metadata),
		json.Unmarshal([]byte(ents), &m.EntityIDs), json.Unmarshal([]byte(types), &m.Types)); err != nil {
		return m, fmt.Errorf("memory %s: %w", m.ID, err)
	}
	return m, nil
}

// getChunk bounds the ids of one Get query.
const getChunk = 500

// Get implements vector.Driver.
func (d *Driver) Get(ctx context.Context, userID string, ids []string) ([]vector.Memory, error) {
	byID := make(map[string]vector.Memory, len(ids))
	for start := 0; start < len(ids); start += getChunk {
		chunk := ids[start:min(start+getChunk, len(ids))]
		args := []any{userID}
		for _, id := range chunk {
			args = append(args, id)
		}
		// The unary + keeps SQLite from choosing the user's index over
		// the unique index on id, which would scan every row of the user.
		rows, err := d.db.Read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE +m.user_id = ? AND m.id IN (`+
			placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: get: %w", err)
		}
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("vector/embedded: get: %w", err)
			}
			byID[m.ID] = m
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("vector/embedded: get: %w", err)
		}
	}
	out := make([]vector.Memory, 0, len(byID))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
			delete(byID, id)
		}
	}
	return out, nil
}

// Embeddings implements vector.Driver: the stored little-endian float32s
// decoded.
func (d *Driver) Embeddings(ctx context.Context, userID string, ids []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(ids))
	for start := 0; start < len(ids); start += getChunk {
		chunk := ids[start:min(start+getChunk, len(ids))]
		args := []any{userID}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := d.db.Read.QueryContext(ctx, `SELECT m.id, m.embedding FROM memories m WHERE +m.user_id = ? AND m.id IN (`+
			placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: embeddings: %w", err)
		}
		for rows.Next() {
			var (
				id  string
				emb []byte
			)
			if err := rows.Scan(&id, &emb); err != nil {
				rows.Close()
				return nil, fmt.Errorf("vector/embedded: embeddings: %w", err)
			}
			vec := make([]float32, len(emb)/4)
			for i := range vec {
				vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(emb[4*i:]))
			}
			out[id] = vec
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("vector/embedded: embeddings: %w", err)
		}
	}
	return out, nil
}

// maxMergedCollections is the most collections whose newest memories List
// reads one collection at a time and merges.
const maxMergedCollections = 32

// List implements vector.Driver.
func (d *Driver) List(ctx context.Context, q vector.ListQuery) ([]vector.Memory, int, error) {
	// The total also chooses how the tag and entity filters are written
	// (listForm); without them it is counted only for a caller that
	// wants it.
	var total int
	if !q.NoTotal || len(q.Tags) > 0 || q.EntityID != "" {
		count, countArgs := countQuery(q.Filter)
		if err := d.db.Read.QueryRowContext(ctx, count, countArgs...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("vector/embedded: list: %w", err)
		}
	}
	out, err := d.page(ctx, q, listForm(total, q.Offset, q.Limit))
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// page reads the page of q, its tag and entity filters written as form
// says.
func (d *Driver) page(ctx context.Context, q vector.ListQuery, form seqForm) ([]vector.Memory, error) {
	where, args := whereClauseAs(q.Filter, form)
	dir := "DESC"
	if q.Ascending {
		dir = "ASC"
	}
	order := "m.created_at " + dir + ", m.id"
	if q.Sort == vector.SortConfidence {
		order = "m.confidence IS NULL, m.confidence " + dir + ", m.id"
	}
	if q.Sort == vector.SortOccurredAt {
		order = "m.occurred_at " + dir + ", m.id"
	}
	text := `SELECT ` + memoryColumns + ` FROM memories m WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	if q.Sort == vector.SortCreatedAt && !q.Ascending && len(q.Collections) > 1 && len(q.Collections) <= maxMergedCollections {
		// The newest of several collections: each collection's newest
		// offset+limit through its (user, collection, created_at DESC,
		// id) index, merged, rather than every matching row sorted.
		arms := make([]string, len(q.Collections))
		args = args[:0]
		for i, c := range q.Collections {
			f := q.Filter
			f.Collections = []string{c}
			w, a := whereClauseAs(f, form)
			arms[i] = `SELECT * FROM (SELECT ` + memoryColumns + ` FROM memories m WHERE ` + w + ` ORDER BY ` + order + ` LIMIT ?)`
			args = append(append(args, a...), q.Offset+q.Limit)
		}
		text = `SELECT * FROM (` + strings.Join(arms, ` UNION ALL `) + `) m ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	}
	rows, err := d.db.Read.QueryContext(ctx, text, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: list: %w", err)
	}
	defer rows.Close()
	var out []vector.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("vector/embedded: list: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: list: %w", err)
	}
	return out, nil
}

// Collections implements vector.Driver.
func (d *Driver) Collections(ctx context.Context, userID string, readableTypes []string) ([]vector.Collection, error) {
	// Arguments bind in the order of their ?: the count's first.
	counted, args := "", []any{userID}
	if readableTypes != nil {
		counted, args = " AND "+typesReadable, []any{readableArg(readableTypes), userID}
	}
	rows, err := d.db.Read.QueryContext(ctx, `SELECT s.collection, s.embedder, s.dimension,
		(SELECT count(*) FROM memories m WHERE m.user_id = s.user_id AND m.collection = s.collection`+counted+`)
		FROM memory_spaces s WHERE s.user_id = ? ORDER BY s.collection`, args...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: collections: %w", err)
	}
	defer rows.Close()
	var out []vector.Collection
	for rows.Next() {
		var c vector.Collection
		if err := rows.Scan(&c.Name, &c.Space.Embedder, &c.Space.Dimension, &c.Count); err != nil {
			return nil, fmt.Errorf("vector/embedded: collections: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: collections: %w", err)
	}
	return out, nil
}

// MatchText implements vector.Driver with FTS5's bm25 ranking; equal
// scores are ordered by text, then id (vector.Driver).
func (d *Driver) MatchText(ctx context.Context, q vector.TextQuery) ([]vector.Scored, error) {
	where, args := whereClause(q.Filter)
	args = append([]any{ftsQuery(q.Terms, " OR ")}, args...)
	rows, err := d.db.Read.QueryContext(ctx, `SELECT m.id, bm25(memories_fts) AS r
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND `+where+` ORDER BY r, m.text, m.id LIMIT ?`, append(args, q.K)...)
	if err != nil {
		return nil, fmt.Errorf("vector/embedded: text search: %w", err)
	}
	defer rows.Close()
	var out []vector.Scored
	for rows.Next() {
		var s vector.Scored
		if err := rows.Scan(&s.ID, &s.Score); err != nil {
			return nil, fmt.Errorf("vector/embedded: text search: %w", err)
		}
		s.Score = -s.Score // bm25 is lower for better matches
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector/embedded: text search: %w", err)
	}
	return out, nil
}

// needsSQL reports whether f filters on columns the vector cache does not
// hold.
func needsSQL(f vector.Filter) bool {
	return len(f.Keywords) > 0 || len(f.Metadata) > 0
}

// ftsQuery joins terms, each quoted as an FTS5 string, with op. Terms hold
// only letters and digits (vector.Terms), so quoting needs no escaping;
// doubling quotes keeps that true for any caller.
func ftsQuery(terms []string, op string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, op)
}

func placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	return strings.Repeat("?, ", n-1) + "?"
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
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
