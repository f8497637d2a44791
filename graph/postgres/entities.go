package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
	"github.com/cairnkg/cairn/graph/internal/statlist"
)

func (t *tx) InsertSource(ctx context.Context, s graph.Source) error {
	if err := t.enter(ctx, s.UserID); err != nil {
		return err
	}
	prov, err := jsoncodec.Encode(orEmpty(s.Provenance))
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO sources
		(id, user_id, content_hash, kind, mime_type, original_filename, size, provenance, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		s.ID, s.UserID, s.ContentHash, s.Kind, s.MimeType, s.OriginalFilename, s.Size, prov, s.CreatedAt)
	return inserted(tag, err, "source", s.ID)
}

const sourceColumns = `id, user_id, content_hash, kind, mime_type, original_filename, size, provenance::text, created_at`

func scanSource(row rowScanner) (graph.Source, error) {
	var s graph.Source
	var prov string
	if err := row.Scan(&s.ID, &s.UserID, &s.ContentHash, &s.Kind, &s.MimeType, &s.OriginalFilename, &s.Size, &prov, &s.CreatedAt); err != nil {
		return s, err
	}
	s.CreatedAt = s.CreatedAt.UTC()
	var err error
	s.Provenance, err = jsoncodec.Map(prov)
	return s, err
}

func (t *tx) Source(ctx context.Context, userID, id string) (graph.Source, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Source{}, err
	}
	s, err := scanSource(t.tx.QueryRow(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return s, notFound("source", id)
	}
	return s, wrap("read source", err)
}

func (t *tx) SourceByHash(ctx context.Context, userID, hash string) (graph.Source, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Source{}, err
	}
	s, err := scanSource(t.tx.QueryRow(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = $1 AND content_hash = $2`, userID, hash))
	if noRows(err) {
		return s, notFound("source with hash", hash)
	}
	return s, wrap("read source", err)
}

// EnsureSources implements graph.DriverTx in one statement: an insert from
// arrays of the first source of each (user, hash), which ON CONFLICT DO
// NOTHING skips when the user has that hash (or the id exists), and a read
// of what the insert returned with what was stored before it. A source
// that is neither (its id taken by another hash) is ErrConflict.
func (t *tx) EnsureSources(ctx context.Context, srcs []graph.Source) ([]graph.Source, error) {
	if len(srcs) == 0 {
		return []graph.Source{}, nil
	}
	n := len(srcs)
	var (
		ids, users, hashes, kinds, mimes, names, provs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		sizes                                          = make([]int64, n)
		created                                        = make([]time.Time, n)
	)
	for i, s := range srcs {
		if err := t.enter(ctx, s.UserID); err != nil {
			return nil, err
		}
		prov, err := jsoncodec.Encode(orEmpty(s.Provenance))
		if err != nil {
			return nil, err
		}
		ids[i], users[i], hashes[i], kinds[i], mimes[i], names[i], provs[i] = s.ID, s.UserID, s.ContentHash, s.Kind, s.MimeType, s.OriginalFilename, prov
		sizes[i], created[i] = s.Size, s.CreatedAt
	}
	rows, err := query(ctx, t, scanSource, `WITH given AS (
		  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[],
		    $8::text[], $9::timestamptz[]) WITH ORDINALITY AS g(id, u, hash, kind, mime, fname, size, prov, created, ord)
		), ins AS (
		  INSERT INTO sources (id, user_id, content_hash, kind, mime_type, original_filename, size, provenance, created_at)
		  SELECT DISTINCT ON (u, hash) id, u, hash, kind, mime, fname, size, prov::jsonb, created
		  FROM given ORDER BY u, hash, ord
		  ON CONFLICT DO NOTHING
		  RETURNING `+sourceColumns+`
		)
		SELECT * FROM ins
		UNION ALL
		SELECT `+sourceColumns+` FROM sources WHERE (user_id, content_hash) IN (SELECT u, hash FROM given)`,
		ids, users, hashes, kinds, mimes, names, sizes, provs, created)
	if err != nil {
		return nil, wrap("ensure sources", err)
	}
	type key struct{ user, hash string }
	found := make(map[key]graph.Source, len(rows))
	for _, s := range rows {
		found[key{s.UserID, s.ContentHash}] = s
	}
	out := make([]graph.Source, n)
	for i, s := range srcs {
		var ok bool
		if out[i], ok = found[key{s.UserID, s.ContentHash}]; !ok {
			return nil, conflict("source", s.ID)
		}
	}
	return out, nil
}

func (t *tx) PutEntity(ctx context.Context, e graph.Entity) error {
	return t.PutEntities(ctx, []graph.Entity{e})
}

// PutEntities implements graph.DriverTx: one upsert from arrays, whatever
// the number of entities.
func (t *tx) PutEntities(ctx context.Context, es []graph.Entity) error {
	if len(es) == 0 {
		return nil
	}
	n := len(es)
	var (
		ids, users, types, names, versions, snaps, provs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		counts                                           = make([]int64, n)
		last, created, computed                          = make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
		mergedInto                                       = make([]*string, n)
		mergedAt                                         = make([]*time.Time, n)
		sigs                                             = make([][]byte, n)
		keys                                             = make([]string, n)
	)
	for i, e := range es {
		if err := t.enter(ctx, e.UserID); err != nil {
			return err
		}
		snap, err := jsoncodec.Encode(orEmpty(e.Snapshot))
		if err != nil {
			return err
		}
		prov, err := jsoncodec.Encode(orEmptyStrings(e.Provenance))
		if err != nil {
			return err
		}
		ids[i], users[i], types[i], names[i], versions[i], snaps[i], provs[i] = e.ID, e.UserID, e.Type, e.CanonicalName, e.SchemaVersion, snap, prov
		counts[i], last[i], created[i], computed[i] = int64(e.ObservationCount), e.LastObservationAt, e.CreatedAt, e.ComputedAt
		if e.MergedInto != "" {
			mergedInto[i] = &es[i].MergedInto
		}
		mergedAt[i] = nullTime(e.MergedAt)
		sigs[i], keys[i] = graph.EntityTextSig(e), graph.NameKeysJSON(e.CanonicalName)
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO entities
		(id, user_id, entity_type, canonical_name, schema_version, snapshot, provenance, observation_count,
		 last_observation_at, created_at, computed_at, merged_into, merged_at, text_sig, name_keys)
		SELECT id, u, typ, name, ver, snap::jsonb, prov::jsonb, n, last, created, computed, mi, ma, sig, `+nameKeysSQL+`
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
			$9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::text[], $13::timestamptz[], $14::bytea[], $15::text[])
			AS u(id, u, typ, name, ver, snap, prov, n, last, created, computed, mi, ma, sig, nk)
		ON CONFLICT (id) DO UPDATE SET
		  entity_type = excluded.entity_type, canonical_name = excluded.canonical_name,
		  schema_version = excluded.schema_version, snapshot = excluded.snapshot,
		  provenance = excluded.provenance, observation_count = excluded.observation_count,
		  last_observation_at = excluded.last_observation_at, created_at = excluded.created_at,
		  computed_at = excluded.computed_at, merged_into = excluded.merged_into, merged_at = excluded.merged_at,
		  text_sig = excluded.text_sig, name_keys = excluded.name_keys
		WHERE entities.user_id = excluded.user_id`,
		ids, users, types, names, versions, snaps, provs, counts, last, created, computed, mergedInto, mergedAt, sigs, keys)
	return wrap("put entities", err)
}

const entityColumns = `id, user_id, entity_type, canonical_name, schema_version, snapshot::text, provenance::text,
	observation_count, last_observation_at, created_at, computed_at, merged_into, merged_at`

func scanEntity(row rowScanner) (graph.Entity, error) {
	var e graph.Entity
	var snap, prov string
	var mergedInto *string
	var mergedAt *time.Time
	if err := row.Scan(&e.ID, &e.UserID, &e.Type, &e.CanonicalName, &e.SchemaVersion, &snap, &prov,
		&e.ObservationCount, &e.LastObservationAt, &e.CreatedAt, &e.ComputedAt, &mergedInto, &mergedAt); err != nil {
		return e, err
	}
	e.LastObservationAt, e.CreatedAt, e.ComputedAt = e.LastObservationAt.UTC(), e.CreatedAt.UTC(), e.ComputedAt.UTC()
	if mergedInto != nil {
		e.MergedInto = *mergedInto
	}
	e.MergedAt = fromNullTime(mergedAt)
	var err error
	if e.Snapshot, err = jsoncodec.Map(snap); err != nil {
		return e, err
	}
	e.Provenance, err = jsoncodec.StringMap(prov)
	return e, err
}

func (t *tx) Entity(ctx context.Context, userID, id string) (graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Entity{}, err
	}
	e, err := scanEntity(t.tx.QueryRow(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return e, notFound("entity", id)
	}
	return e, wrap("read entity", err)
}

func (t *tx) Entities(ctx context.Context, userID string, ids []string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, t, scanEntity, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, wrap("read entities", err)
	}
	return byid.InOrder(ids, rows, func(e graph.Entity) string { return e.ID }), nil
}

func (t *tx) ListEntities(ctx context.Context, f graph.EntityFilter) ([]graph.Entity, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.Entity{}, 0, nil
	}
	a := args{}
	where := []string{"user_id = " + a.add(f.UserID)}
	if !f.IncludeMerged {
		where = append(where, "merged_into IS NULL")
	}
	if f.Types != nil {
		where = append(where, "entity_type = ANY("+a.add(f.Types)+")")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM entities WHERE `+cond, a...).Scan(&total); err != nil {
		return nil, 0, wrap("count entities", err)
	}
	page := `LIMIT ` + a.add(limitOr(f.Page, 100)) + ` OFFSET ` + a.add(f.Page.Offset)
	out, err := query(ctx, t, scanEntity, `SELECT `+entityColumns+` FROM entities WHERE `+cond+`
		ORDER BY last_observation_at DESC, id ASC `+page, a...)
	return out, total, wrap("list entities", err)
}

func (t *tx) ListEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.EntityStat{}, nil
	}
	a := args{}
	where := []string{"user_id = " + a.add(f.UserID)}
	if !f.IncludeMerged {
		where = append(where, "merged_into IS NULL")
	}
	if f.Types != nil {
		where = append(where, "entity_type = ANY("+a.add(f.Types)+")")
	}
	page := `LIMIT ` + a.add(limitOr(f.Page, 100)) + ` OFFSET ` + a.add(f.Page.Offset)
	sig := "NULL::bytea"
	if f.TextSigs {
		sig = "text_sig"
	}
	list := `SELECT id, entity_type, observation_count, last_observation_at, merged_into, ` + sig + `
		FROM entities WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY last_observation_at DESC, id ASC ` + page
	if f.WithoutDegrees || f.Types != nil || limitOr(f.Page, 100) <= degreesByID {
		rows, err := t.tx.Query(ctx, list, a...)
		if err != nil {
			return nil, wrap("list entity stats", err)
		}
		out, err := readStats(rows)
		if err != nil || f.WithoutDegrees {
			return out, wrap("list entity stats", err)
		}
		return out, wrap("list entity degrees", t.addDegrees(ctx, f.UserID, out))
	}
	// Without a type filter and with room for more than degreesByID
	// entities, the list is most often all of the user's entities, whose
	// degrees are those of all the user's live relationships: both queries
	// go in one round trip, and the server reads the relationships while
	// the list is being read here.
	b := &pgx.Batch{}
	b.Queue(list, a...)
	b.Queue(liveEdgeEnds, f.UserID)
	res := t.tx.SendBatch(ctx, b)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return nil, wrap("list entity stats", err)
	}
	out, err := readStats(rows)
	if err != nil {
		return nil, wrap("list entity stats", err)
	}
	if rows, err = res.Query(); err != nil {
		return nil, wrap("list entity degrees", err)
	}
	return out, wrap("list entity degrees", scanEdgeEnds(rows, out))
}

// degreesByID is how many entities addDegrees names in its query at most;
// for more, it counts the degrees of every live relationship of the user
// and keeps those of stats. A long id array is what made the query slow:
// = ANY of a parameter array is a linear search per relationship (10,000
// ids cost about 200 ms against 5 ms without), and the stats of a context
// load are usually every entity of the user.
const degreesByID = 500

// degreesOfIDs counts the live relationships of user $1 whose source, and
// those whose target, is one of the ids $2, by entity and type of the
// entity at the other end.
const degreesOfIDs = `
	SELECT source_entity_id, target_type, count(*) FROM relationships
	WHERE user_id = $1 AND ended_at IS NULL AND source_entity_id = ANY($2) GROUP BY source_entity_id, target_type
	UNION ALL
	SELECT target_entity_id, source_type, count(*) FROM relationships
	WHERE user_id = $1 AND ended_at IS NULL AND target_entity_id = ANY($2) GROUP BY target_entity_id, source_type`

// liveEdgeEnds lists the ends of every live relationship of user $1, to be
// counted here (scanEdgeEnds) rather than grouped by the server: at
// 10,000 entities and 20,000 relationships the two groupings took the
// server 17 ms, the plain list 9, and ListEntityStats of every entity
// went from 23.5 to 11 ms (BenchmarkListEntityStats); with 200,000
// relationships among them, from 90 to 72 ms (PostgreSQL on the same
// host). The price is on a slow link to the server: every relationship's
// ends travel, about 75 bytes each, where the groups of a dense graph
// would be fewer.
const liveEdgeEnds = `SELECT source_entity_id, target_entity_id, source_type, target_type
	FROM relationships WHERE user_id = $1 AND ended_at IS NULL`

// addDegrees sets the Degrees of stats from their live relationships,
// counted by the server for a few stats, or from all the user's live
// relationships when stats are many.
func (t *tx) addDegrees(ctx context.Context, userID string, stats []graph.EntityStat) error {
	if len(stats) == 0 {
		return nil
	}
	if len(stats) > degreesByID {
		rows, err := t.tx.Query(ctx, liveEdgeEnds, userID)
		if err != nil {
			return err
		}
		return scanEdgeEnds(rows, stats)
	}
	ids := make([]string, len(stats))
	for i, e := range stats {
		ids[i] = e.ID
	}
	rows, err := t.tx.Query(ctx, degreesOfIDs, userID, ids)
	if err != nil {
		return err
	}
	return scanDegrees(rows, stats)
}

// scanEdgeEnds adds the relationships whose ends rows of liveEdgeEnds
// list to the degrees of stats, and closes rows. A relationship from an
// entity to itself counts at both ends.
func scanEdgeEnds(rows pgx.Rows, stats []graph.EntityStat) error {
	defer rows.Close()
	d := statlist.NewDegrees(stats)
	var src, dst, srcType, dstType pgtype.DriverBytes
	for rows.Next() {
		if err := rows.Scan(&src, &dst, &srcType, &dstType); err != nil {
			return err
		}
		d.Add(src, dstType, 1)
		d.Add(dst, srcType, 1)
	}
	return rows.Err()
}

// scanDegrees adds the degrees rows of degreesOfIDs count to those of stats
// they name, and closes rows.
func scanDegrees(rows pgx.Rows, stats []graph.EntityStat) error {
	defer rows.Close()
	d := statlist.NewDegrees(stats)
	var id, typ pgtype.DriverBytes
	var n int
	for rows.Next() {
		if err := rows.Scan(&id, &typ, &n); err != nil {
			return err
		}
		d.Add(id, typ, n)
	}
	return rows.Err()
}

// readStats reads rows of entity statistics (id, entity_type,
// observation_count, last_observation_at, merged_into, text_sig), and
// closes rows. The type, merged_into and signature are scanned as the
// driver's own bytes: statlist copies what it keeps, and a row costs one
// allocation, its id.
func readStats(rows pgx.Rows) ([]graph.EntityStat, error) {
	defer rows.Close()
	var (
		e                graph.EntityStat
		typ, merged, sig pgtype.DriverBytes
		list             statlist.List
	)
	for rows.Next() {
		if err := rows.Scan(&e.ID, &typ, &e.ObservationCount, &e.LastObservationAt, &merged, &sig); err != nil {
			return nil, err
		}
		e.LastObservationAt = e.LastObservationAt.UTC()
		e.MergedInto = ""
		if merged != nil {
			e.MergedInto = string(merged)
		}
		list.Add(e, typ, sig)
	}
	return list.Stats(), rows.Err()
}

func (t *tx) SetIdentifiers(ctx context.Context, userID, entityID string, ids []graph.Identifier) error {
	return t.SetEntityIdentifiers(ctx, userID, []graph.EntityIdentifiers{{EntityID: entityID, Identifiers: ids}})
}

// SetEntityIdentifiers implements graph.DriverTx: one delete and one insert
// from arrays.
func (t *tx) SetEntityIdentifiers(ctx context.Context, userID string, sets []graph.EntityIdentifiers) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(sets) == 0 {
		return nil
	}
	entityIDs := make([]string, len(sets))
	var values, owners, fields []string
	for i, set := range sets {
		entityIDs[i] = set.EntityID
		for _, id := range set.Identifiers {
			values, owners, fields = append(values, id.Value), append(owners, set.EntityID), append(fields, id.Field)
		}
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM entity_identifiers WHERE user_id = $1 AND entity_id = ANY($2)`, userID, entityIDs); err != nil {
		return wrap("clear identifiers", err)
	}
	if len(values) == 0 {
		return nil
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO entity_identifiers (user_id, value, entity_id, field)
		SELECT $1, v, e, f FROM unnest($2::text[], $3::text[], $4::text[]) AS u(v, e, f)
		ON CONFLICT DO NOTHING`, userID, values, owners, fields)
	return wrap("set identifiers", err)
}

func (t *tx) EntitiesByIdentifier(ctx context.Context, userID, value, entityType string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	q := `SELECT ` + entityColumns + ` FROM entities
		WHERE user_id = $1 AND merged_into IS NULL AND id IN (
		  SELECT entity_id FROM entity_identifiers WHERE user_id = $1 AND value = $2)`
	a := args{userID, value}
	if entityType != "" {
		q += ` AND entity_type = ` + a.add(entityType)
	}
	out, err := query(ctx, t, scanEntity, q+` ORDER BY id`, a...)
	return out, wrap("find by identifier", err)
}

func (t *tx) EntityTypeCounts(ctx context.Context, userID string) (map[string]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	type count struct {
		typ string
		n   int
	}
	rows, err := query(ctx, t, func(r rowScanner) (count, error) {
		var c count
		err := r.Scan(&c.typ, &c.n)
		return c, err
	}, `SELECT entity_type, count(*) FROM entities
		WHERE user_id = $1 AND merged_into IS NULL GROUP BY entity_type`, userID)
	if err != nil {
		return nil, wrap("count entity types", err)
	}
	out := make(map[string]int, len(rows))
	for _, c := range rows {
		out[c.typ] = c.n
	}
	return out, nil
}

// EntityTypes implements graph.DriverTx: a skip over entities_user_type
// (each step the smallest type above the last), then, per type, the first
// unmerged entity of it.
func (t *tx) EntityTypes(ctx context.Context, userID string) ([]string, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, func(r rowScanner) (string, error) {
		var typ string
		err := r.Scan(&typ)
		return typ, err
	}, `WITH RECURSIVE types(typ) AS (
		  SELECT (SELECT min(entity_type) FROM entities WHERE user_id = $1)
		  UNION ALL
		  SELECT (SELECT min(entity_type) FROM entities WHERE user_id = $1 AND entity_type > types.typ)
		  FROM types WHERE types.typ IS NOT NULL)
		SELECT typ FROM types WHERE typ IS NOT NULL AND EXISTS (
		  SELECT 1 FROM entities e WHERE e.user_id = $1 AND e.entity_type = types.typ AND e.merged_into IS NULL)
		ORDER BY typ`, userID)
	return out, wrap("list entity types", err)
}
