package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
	"github.com/cairnkg/cairn/graph/internal/statlist"
)

func (t *tx) InsertSource(ctx context.Context, s graph.Source) error {
	prov, err := jsoncodec.Encode(orEmpty(s.Provenance))
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO sources
		(id, user_id, content_hash, kind, mime_type, original_filename, size, provenance, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.ID, s.UserID, s.ContentHash, s.Kind, s.MimeType, s.OriginalFilename, s.Size, prov, micros(s.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("graph/embedded: source %s: %w", s.ID, graph.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("graph/embedded: insert source: %w", err)
	}
	return nil
}

const sourceColumns = `id, user_id, content_hash, kind, mime_type, original_filename, size, provenance, created_at`

func scanSource(row interface{ Scan(...any) error }) (graph.Source, error) {
	var s graph.Source
	var prov string
	var created int64
	if err := row.Scan(&s.ID, &s.UserID, &s.ContentHash, &s.Kind, &s.MimeType, &s.OriginalFilename, &s.Size, &prov, &created); err != nil {
		return s, err
	}
	s.CreatedAt = fromMicros(created)
	var err error
	s.Provenance, err = jsoncodec.Map(prov)
	return s, err
}

func (t *tx) Source(ctx context.Context, userID, id string) (graph.Source, error) {
	s, err := scanSource(t.queryRow(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return s, notFound("source", id)
	}
	return s, wrap("read source", err)
}

func (t *tx) SourceByHash(ctx context.Context, userID, hash string) (graph.Source, error) {
	s, err := scanSource(t.queryRow(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = $1 AND content_hash = $2`, userID, hash))
	if noRows(err) {
		return s, notFound("source with hash", hash)
	}
	return s, wrap("read source", err)
}

// EnsureSources implements graph.DriverTx: per user, one read of the
// sources with the hashes, then one insert of those none of them had.
func (t *tx) EnsureSources(ctx context.Context, srcs []graph.Source) ([]graph.Source, error) {
	type key struct{ user, hash string }
	have := make(map[key]graph.Source, len(srcs))
	hashes := map[string][]string{}
	var users []string
	for _, s := range srcs {
		if _, ok := hashes[s.UserID]; !ok {
			users = append(users, s.UserID)
		}
		hashes[s.UserID] = append(hashes[s.UserID], s.ContentHash)
	}
	for _, u := range users {
		err := chunks(len(hashes[u]), 500, func(start, end int) error {
			rows, err := t.query(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = ? AND content_hash IN (`+qmarks(end-start)+`)`,
				append([]any{u}, anySlice(hashes[u][start:end])...)...)
			if err != nil {
				return wrap("read sources", err)
			}
			return wrap("read sources", eachRow(rows, func(r *sql.Rows) error {
				s, err := scanSource(r)
				have[key{s.UserID, s.ContentHash}] = s
				return err
			}))
		})
		if err != nil {
			return nil, err
		}
	}
	// missing are the sources to store, each with its provenance as it is
	// stored and read back.
	var missing []graph.Source
	var provs []string
	for _, s := range srcs {
		if _, ok := have[key{s.UserID, s.ContentHash}]; ok {
			continue
		}
		prov, err := jsoncodec.Encode(orEmpty(s.Provenance))
		if err != nil {
			return nil, err
		}
		if s.Provenance, err = jsoncodec.Map(prov); err != nil {
			return nil, err
		}
		have[key{s.UserID, s.ContentHash}] = s
		missing, provs = append(missing, s), append(provs, prov)
	}
	const cols = 9
	err := chunks(len(missing), rowChunk(cols), func(start, end int) error {
		args := make([]any, 0, (end-start)*cols)
		for i, s := range missing[start:end] {
			args = append(args, s.ID, s.UserID, s.ContentHash, s.Kind, s.MimeType, s.OriginalFilename, s.Size, provs[start+i], micros(s.CreatedAt))
		}
		_, err := t.exec(ctx, `INSERT INTO sources
			(id, user_id, content_hash, kind, mime_type, original_filename, size, provenance, created_at)
			VALUES `+valueRows(end-start, cols), args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("graph/embedded: source %s: %w", firstID(missing[start:end], func(s graph.Source) string { return s.ID }), graph.ErrConflict)
		}
		return wrap("insert sources", err)
	})
	if err != nil {
		return nil, err
	}
	out := make([]graph.Source, len(srcs))
	for i, s := range srcs {
		out[i] = have[key{s.UserID, s.ContentHash}]
	}
	return out, nil
}

func (t *tx) PutEntity(ctx context.Context, e graph.Entity) error {
	return t.PutEntities(ctx, []graph.Entity{e})
}

// entityPutColumns is how many parameters one row of PutEntities takes.
const entityPutColumns = 15

// PutEntities implements graph.DriverTx: one multi-row upsert per chunk.
func (t *tx) PutEntities(ctx context.Context, es []graph.Entity) error {
	return chunks(len(es), rowChunk(entityPutColumns), func(start, end int) error {
		args := make([]any, 0, (end-start)*entityPutColumns)
		for _, e := range es[start:end] {
			snap, err := jsoncodec.Encode(orEmpty(e.Snapshot))
			if err != nil {
				return err
			}
			prov, err := jsoncodec.Encode(orEmptyStrings(e.Provenance))
			if err != nil {
				return err
			}
			var mergedInto any
			if e.MergedInto != "" {
				mergedInto = e.MergedInto
			}
			args = append(args, e.ID, e.UserID, e.Type, e.CanonicalName, e.SchemaVersion, snap, prov, e.ObservationCount,
				micros(e.LastObservationAt), micros(e.CreatedAt), micros(e.ComputedAt), mergedInto, nullMicros(e.MergedAt),
				[]byte(graph.EntityTextSig(e)), graph.NameKeysJSON(e.CanonicalName))
		}
		_, err := t.exec(ctx, `INSERT INTO entities
		(id, user_id, entity_type, canonical_name, schema_version, snapshot, provenance, observation_count,
		 last_observation_at, created_at, computed_at, merged_into, merged_at, text_sig, name_keys)
		VALUES `+valueRows(end-start, entityPutColumns)+`
		ON CONFLICT (id) DO UPDATE SET
		  entity_type = excluded.entity_type, canonical_name = excluded.canonical_name,
		  schema_version = excluded.schema_version, snapshot = excluded.snapshot,
		  provenance = excluded.provenance, observation_count = excluded.observation_count,
		  last_observation_at = excluded.last_observation_at, created_at = excluded.created_at,
		  computed_at = excluded.computed_at, merged_into = excluded.merged_into, merged_at = excluded.merged_at,
		  text_sig = excluded.text_sig, name_keys = excluded.name_keys
		WHERE entities.user_id = excluded.user_id`, args...)
		return wrap("put entities", err)
	})
}

const entityColumns = `id, user_id, entity_type, canonical_name, schema_version, snapshot, provenance,
	observation_count, last_observation_at, created_at, computed_at, merged_into, merged_at`

func scanEntity(row interface{ Scan(...any) error }) (graph.Entity, error) {
	var e graph.Entity
	var snap, prov string
	var last, created, computed int64
	var mergedInto sql.NullString
	var mergedAt sql.NullInt64
	if err := row.Scan(&e.ID, &e.UserID, &e.Type, &e.CanonicalName, &e.SchemaVersion, &snap, &prov,
		&e.ObservationCount, &last, &created, &computed, &mergedInto, &mergedAt); err != nil {
		return e, err
	}
	e.LastObservationAt, e.CreatedAt, e.ComputedAt = fromMicros(last), fromMicros(created), fromMicros(computed)
	e.MergedInto, e.MergedAt = mergedInto.String, fromNullMicros(mergedAt)
	var err error
	if e.Snapshot, err = jsoncodec.Map(snap); err != nil {
		return e, err
	}
	e.Provenance, err = jsoncodec.StringMap(prov)
	return e, err
}

func (t *tx) Entity(ctx context.Context, userID, id string) (graph.Entity, error) {
	e, err := scanEntity(t.queryRow(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return e, notFound("entity", id)
	}
	return e, wrap("read entity", err)
}

func (t *tx) Entities(ctx context.Context, userID string, ids []string) ([]graph.Entity, error) {
	found := make([]graph.Entity, 0, len(ids))
	// Chunk to stay far below SQLite's limit on bound parameters.
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		// "+user_id" keeps SQLite from answering through the (user_id, …)
		// indexes, which it would otherwise prefer for more than a few ids
		// and then scan every entity of the user: the primary key finds
		// each id directly, and the user check filters the rows it finds.
		rows, err := t.query(ctx, `SELECT `+entityColumns+` FROM entities
			WHERE +user_id = ? AND id IN (`+qmarks(len(chunk))+`)`, append([]any{userID}, anySlice(chunk)...)...)
		if err != nil {
			return nil, wrap("read entities", err)
		}
		err = eachRow(rows, func(r *sql.Rows) error {
			e, err := scanEntity(r)
			found = append(found, e)
			return err
		})
		if err != nil {
			return nil, wrap("read entities", err)
		}
	}
	return byid.InOrder(ids, found, func(e graph.Entity) string { return e.ID }), nil
}

func (t *tx) ListEntities(ctx context.Context, f graph.EntityFilter) ([]graph.Entity, int, error) {
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.Entity{}, 0, nil
	}
	where := []string{"user_id = $1"}
	args := []any{f.UserID}
	if !f.IncludeMerged {
		where = append(where, "merged_into IS NULL")
	}
	if f.Types != nil {
		where = append(where, "entity_type IN ("+placeholders(len(args)+1, len(f.Types))+")")
		args = append(args, anySlice(f.Types)...)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM entities WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count entities", err)
	}
	args = append(args, limitOr(f.Page, 100), f.Page.Offset)
	rows, err := t.query(ctx, `SELECT `+entityColumns+` FROM entities WHERE `+cond+`
		ORDER BY last_observation_at DESC, id ASC LIMIT $`+fmt.Sprint(len(args)-1)+` OFFSET $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list entities", err)
	}
	out := []graph.Entity{}
	err = eachRow(rows, func(r *sql.Rows) error {
		e, err := scanEntity(r)
		out = append(out, e)
		return err
	})
	return out, total, wrap("list entities", err)
}

func (t *tx) ListEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.EntityStat{}, nil
	}
	where := []string{"user_id = $1"}
	args := []any{f.UserID}
	if !f.IncludeMerged {
		where = append(where, "merged_into IS NULL")
	}
	if f.Types != nil {
		where = append(where, "entity_type IN ("+placeholders(len(args)+1, len(f.Types))+")")
		args = append(args, anySlice(f.Types)...)
	}
	args = append(args, limitOr(f.Page, 100), f.Page.Offset)
	// Only the columns asked for: a context load lists every entity of
	// the user, and each column costs a call into SQLite per row. Without
	// IncludeMerged, merged_into is NULL by the filter.
	cols := "id, entity_type, observation_count, last_observation_at"
	if f.IncludeMerged {
		cols += ", merged_into"
	}
	if f.TextSigs {
		cols += ", text_sig"
	}
	// entities_user_stats (migrations 007, 016 and 018) covers this
	// query: SQLite walks it in this order and never reads the rows, whose
	// snapshots come before observation_count and merged_into.
	rows, err := t.query(ctx, `SELECT `+cols+`
		FROM entities WHERE `+strings.Join(where, " AND ")+`
		ORDER BY last_observation_at DESC, id ASC LIMIT $`+fmt.Sprint(len(args)-1)+` OFFSET $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, wrap("list entity stats", err)
	}
	// The values are scanned into the same variables row after row
	// (Scan's pointers would move a row's own to the heap), and
	// statlist keeps the type names, signatures and list compactly.
	var (
		e          graph.EntityStat
		typ        sql.RawBytes
		last       int64
		mergedInto sql.NullString
		sig        sql.RawBytes
		list       statlist.List
	)
	dest := []any{&e.ID, &typ, &e.ObservationCount, &last}
	if f.IncludeMerged {
		dest = append(dest, &mergedInto)
	}
	if f.TextSigs {
		dest = append(dest, &sig)
	}
	err = eachRow(rows, func(r *sql.Rows) error {
		sig = nil
		if err := r.Scan(dest...); err != nil {
			return err
		}
		e.LastObservationAt, e.MergedInto = fromMicros(last), mergedInto.String
		list.Add(e, typ, sig)
		return nil
	})
	if err != nil {
		return nil, wrap("list entity stats", err)
	}
	out := list.Stats()
	if f.WithoutDegrees {
		return out, nil
	}
	return out, wrap("list entity degrees", t.addDegrees(ctx, f.UserID, out))
}

// liveEdgeEnds lists the ends of every live relationship of a user, for
// addDegrees: the columns, and the FROM clause on. relationships_out
// covers it (migration 017): no row is read. Its order makes chunks of
// the list partition it (rows alike in the ordered columns are alike in
// the others, since a type is part of its entity's id) and is the index's,
// so that SQLite does not sort.
var (
	liveEdgeEndCols  = []string{"source_entity_id", "target_entity_id", "source_type", "target_type"}
	liveEdgeEndsFrom = `relationships WHERE user_id = ? AND ended_at IS NULL`
	liveEdgeEndOrder = `source_entity_id, relationship_type, target_entity_id`
)

// addDegrees sets the Degrees of stats: for a few stats, one grouped pass
// over their live relationships; for many, one pass over all the user's
// live relationships, counted here, read packed (eachPackedRow: at 20,000
// relationships 5 ms where reading them row by row took 14). SQLite
// groups by building a temporary b-tree for each side, which cost more
// than the scan itself (a context load lists every entity: at 10,000
// entities and 3,333 relationships the grouped query took about as long as
// listing the entities).
func (t *tx) addDegrees(ctx context.Context, userID string, stats []graph.EntityStat) error {
	if len(stats) == 0 {
		return nil
	}
	d := statlist.NewDegrees(stats)
	if len(stats) > 500 {
		// A relationship from an entity to itself counts at both ends.
		restart := func() {
			for i := range stats {
				stats[i].Degrees = nil
			}
		}
		return t.eachPackedRow(ctx, liveEdgeEndCols, liveEdgeEndsFrom, liveEdgeEndOrder, []any{userID}, restart, func(f [][]byte) {
			d.Add(f[0], f[3], 1)
			d.Add(f[1], f[2], 1)
		})
	}
	args := []any{userID}
	ids := make([]any, len(stats))
	for i, e := range stats {
		ids[i] = e.ID
	}
	in := placeholders(2, len(ids))
	args = append(args, ids...)
	rows, err := t.query(ctx, `
		SELECT source_entity_id, target_type, count(*) FROM relationships
		WHERE user_id = $1 AND ended_at IS NULL AND source_entity_id IN (`+in+`) GROUP BY source_entity_id, target_type
		UNION ALL
		SELECT target_entity_id, source_type, count(*) FROM relationships
		WHERE user_id = $1 AND ended_at IS NULL AND target_entity_id IN (`+in+`) GROUP BY target_entity_id, source_type`, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, func(r *sql.Rows) error {
		var id, typ sql.RawBytes
		var n int
		if err := r.Scan(&id, &typ, &n); err != nil {
			return err
		}
		d.Add(id, typ, n)
		return nil
	})
}

func (t *tx) SetIdentifiers(ctx context.Context, userID, entityID string, ids []graph.Identifier) error {
	return t.SetEntityIdentifiers(ctx, userID, []graph.EntityIdentifiers{{EntityID: entityID, Identifiers: ids}})
}

// SetEntityIdentifiers implements graph.DriverTx: one delete and one
// multi-row insert per chunk of entities.
func (t *tx) SetEntityIdentifiers(ctx context.Context, userID string, sets []graph.EntityIdentifiers) error {
	err := chunks(len(sets), 500, func(start, end int) error {
		args := []any{userID}
		for _, set := range sets[start:end] {
			args = append(args, set.EntityID)
		}
		_, err := t.exec(ctx, `DELETE FROM entity_identifiers WHERE user_id = ? AND entity_id IN (`+
			qmarks(end-start)+`)`, args...)
		return wrap("clear identifiers", err)
	})
	if err != nil {
		return err
	}
	var rows []any
	for _, set := range sets {
		for _, id := range set.Identifiers {
			rows = append(rows, userID, id.Value, set.EntityID, id.Field)
		}
	}
	const cols = 4
	return chunks(len(rows)/cols, rowChunk(cols), func(start, end int) error {
		_, err := t.exec(ctx, `INSERT INTO entity_identifiers (user_id, value, entity_id, field)
			VALUES `+valueRows(end-start, cols)+` ON CONFLICT DO NOTHING`, rows[start*cols:end*cols]...)
		return wrap("set identifiers", err)
	})
}

// entitiesByIdentifier finds the live entities of user $1 that an
// identifier equal to $2 names. "+e.user_id", as in Entities: each id the
// identifiers name is found through the primary key. With user_id usable,
// SQLite walked every entity of the user through entities_user_type and
// tested each against the list, so that a lookup by name cost time in
// proportion to the store (TestEntityQueriesSeekIDs).
var entitiesByIdentifier = `SELECT ` + prefixed("e.", entityColumns) + ` FROM entities e
	WHERE +e.user_id = $1 AND e.merged_into IS NULL AND e.id IN (
	  SELECT entity_id FROM entity_identifiers WHERE user_id = $1 AND value = $2)`

func (t *tx) EntitiesByIdentifier(ctx context.Context, userID, value, entityType string) ([]graph.Entity, error) {
	q := entitiesByIdentifier
	args := []any{userID, value}
	if entityType != "" {
		q += ` AND e.entity_type = $3`
		args = append(args, entityType)
	}
	rows, err := t.query(ctx, q+` ORDER BY e.id`, args...)
	if err != nil {
		return nil, wrap("find by identifier", err)
	}
	out := []graph.Entity{}
	err = eachRow(rows, func(r *sql.Rows) error {
		e, err := scanEntity(r)
		out = append(out, e)
		return err
	})
	return out, wrap("find by identifier", err)
}

func (t *tx) EntityTypeCounts(ctx context.Context, userID string) (map[string]int, error) {
	rows, err := t.query(ctx, `SELECT entity_type, count(*) FROM entities
		WHERE user_id = $1 AND merged_into IS NULL GROUP BY entity_type`, userID)
	if err != nil {
		return nil, wrap("count entity types", err)
	}
	out := map[string]int{}
	err = eachRow(rows, func(r *sql.Rows) error {
		var typ string
		var n int
		err := r.Scan(&typ, &n)
		out[typ] = n
		return err
	})
	return out, wrap("count entity types", err)
}

// EntityTypes implements graph.DriverTx: a skip over entities_user_type
// (each step the smallest type above the last), then, per type, the first
// unmerged entity of it.
func (t *tx) EntityTypes(ctx context.Context, userID string) ([]string, error) {
	rows, err := t.query(ctx, `WITH RECURSIVE types(typ) AS (
		  SELECT (SELECT min(entity_type) FROM entities WHERE user_id = $1)
		  UNION ALL
		  SELECT (SELECT min(entity_type) FROM entities WHERE user_id = $1 AND entity_type > types.typ)
		  FROM types WHERE types.typ IS NOT NULL)
		SELECT typ FROM types WHERE typ IS NOT NULL AND EXISTS (
		  SELECT 1 FROM entities e INDEXED BY entities_user_type
		  WHERE e.user_id = $1 AND e.entity_type = types.typ AND e.merged_into IS NULL)
		ORDER BY typ`, userID)
	if err != nil {
		return nil, wrap("list entity types", err)
	}
	out := []string{}
	err = eachRow(rows, func(r *sql.Rows) error {
		var typ string
		err := r.Scan(&typ)
		out = append(out, typ)
		return err
	})
	return out, wrap("list entity types", err)
}

// prefixed qualifies every column of a comma-separated list with p.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// eachRow calls fn for every row and closes rows.
func eachRow(rows *sql.Rows, fn func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("graph/embedded: %s: %w", what, err)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orEmptyStrings(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
