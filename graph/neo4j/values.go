package neo4j

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

// Records come back from the Neo4j driver as maps of Go values: strings,
// int64, float64, bool, time.Time (a DATETIME), lists as []any, maps as
// map[string]any, and nil for a missing property. A record decodes its
// fields with the methods below, which remember the first field that was
// not of its type, so that a mapping is a list of assignments and one error
// check.

// record reads the fields of one row (or of one map projection).
type record struct {
	m   map[string]any
	err error
}

func (r *record) fail(key string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("graph/neo4j: field %s is %T, want %s", key, v, want)
	}
}

// str returns a string field; nil reads as "".
func (r *record) str(key string) string {
	switch v := r.m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		r.fail(key, v, "a string")
		return ""
	}
}

// int64 returns an integer field; nil reads as 0.
func (r *record) int64(key string) int64 {
	switch v := r.m[key].(type) {
	case nil:
		return 0
	case int64:
		return v
	default:
		r.fail(key, v, "an integer")
		return 0
	}
}

func (r *record) int(key string) int { return int(r.int64(key)) }

// bytes returns a byte array field; nil reads as nil.
func (r *record) bytes(key string) []byte {
	switch v := r.m[key].(type) {
	case nil:
		return nil
	case []byte:
		return v
	default:
		r.fail(key, v, "a byte array")
		return nil
	}
}

// float returns a float field; an integer is taken too, and nil is 0.
func (r *record) float(key string) float64 {
	switch v := r.m[key].(type) {
	case nil:
		return 0
	case float64:
		return v
	case int64:
		return float64(v)
	default:
		r.fail(key, v, "a float")
		return 0
	}
}

// time returns a DATETIME field in UTC, with the nanoseconds Neo4j keeps
// (graph rows carry microseconds, which round-trip exactly); nil reads as
// the zero time.
func (r *record) time(key string) time.Time {
	switch v := r.m[key].(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return v.UTC()
	default:
		r.fail(key, v, "a DATETIME")
		return time.Time{}
	}
}

// jsonMap decodes a *_json field that holds a JSON object, numbers kept
// exact (json.Number), as every graph driver returns maps.
func (r *record) jsonMap(key string) map[string]any {
	m, err := jsoncodec.Map(r.str(key))
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("graph/neo4j: field %s: %w", key, err)
	}
	return m
}

// jsonValue decodes a *_json field that holds any JSON value (a raw
// fragment's), numbers kept exact.
func (r *record) jsonValue(key string) any {
	var v any
	if err := jsoncodec.Decode(r.str(key), &v); err != nil && r.err == nil {
		r.err = fmt.Errorf("graph/neo4j: field %s: %w", key, err)
	}
	return v
}

// jsonStrings decodes a *_json field that holds an object of strings.
func (r *record) jsonStrings(key string) map[string]string {
	m, err := jsoncodec.StringMap(r.str(key))
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("graph/neo4j: field %s: %w", key, err)
	}
	return m
}

// strings returns a list of strings.
func (r *record) strings(key string) []string {
	list, ok := r.m[key].([]any)
	if !ok {
		if r.m[key] != nil {
			r.fail(key, r.m[key], "a list")
		}
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			r.fail(key, v, "a list of strings")
			return nil
		}
		out = append(out, s)
	}
	return out
}

// sub returns the map field key (a map projection such as e {.id, …}) as
// a record sharing this one's error.
func (r *record) sub(key string) map[string]any {
	m, ok := r.m[key].(map[string]any)
	if !ok {
		r.fail(key, r.m[key], "a map")
		return nil
	}
	return m
}

// rows returns the list of lists field key (a statement that returns many
// rows as one, such as entity_stats_list), each list as a map from the
// names columns gives its members, in order, so that the usual mappers read
// it; a list of another length is an error.
func (r *record) rows(key string, columns ...string) []map[string]any {
	list, ok := r.m[key].([]any)
	if !ok {
		r.fail(key, r.m[key], "a list")
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		row, ok := v.([]any)
		if !ok || len(row) != len(columns) {
			r.fail(key, v, fmt.Sprintf("a list of lists of %d", len(columns)))
			return nil
		}
		m := make(map[string]any, len(columns))
		for i, c := range columns {
			m[c] = row[i]
		}
		out = append(out, m)
	}
	return out
}

// maps returns the list of maps field key (a page of projections).
func (r *record) maps(key string) []map[string]any {
	list, ok := r.m[key].([]any)
	if !ok {
		r.fail(key, r.m[key], "a list")
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			r.fail(key, v, "a list of maps")
			return nil
		}
		out = append(out, m)
	}
	return out
}

func toSource(m map[string]any) (graph.Source, error) {
	r := record{m: m}
	s := graph.Source{
		ID: r.str("id"), UserID: r.str("user_id"), ContentHash: r.str("content_hash"), Kind: r.str("kind"),
		MimeType: r.str("mime_type"), OriginalFilename: r.str("original_filename"), Size: r.int64("size"),
		Provenance: r.jsonMap("provenance_json"), CreatedAt: r.time("created_at"),
	}
	return s, r.err
}

func toEntity(m map[string]any) (graph.Entity, error) {
	r := record{m: m}
	e := graph.Entity{
		ID: r.str("id"), UserID: r.str("user_id"), Type: r.str("entity_type"),
		CanonicalName: r.str("canonical_name"), SchemaVersion: r.str("schema_version"),
		Snapshot: r.jsonMap("snapshot_json"), Provenance: r.jsonStrings("provenance_json"),
		ObservationCount: r.int("observation_count"), LastObservationAt: r.time("last_observation_at"),
		CreatedAt: r.time("created_at"), ComputedAt: r.time("computed_at"),
		MergedInto: r.str("merged_into"), MergedAt: r.time("merged_at"),
	}
	return e, r.err
}

// toEntityStat maps an entry of entity_stats_list (see
// entityStatColumns); Degrees are counted apart (countDegrees).
func toEntityStat(m map[string]any) (graph.EntityStat, error) {
	r := record{m: m}
	e := graph.EntityStat{
		ID: r.str("id"), Type: r.str("entity_type"),
		ObservationCount: r.int("observation_count"), LastObservationAt: r.time("last_observation_at"),
		MergedInto: r.str("merged_into"),
	}
	if sig := r.bytes("text_sig"); len(sig) > 0 {
		e.TextSig = sig
	}
	return e, r.err
}

func toObservation(m map[string]any) (graph.Observation, error) {
	r := record{m: m}
	o := graph.Observation{
		ID: r.str("id"), UserID: r.str("user_id"), EntityID: r.str("entity_id"), EntityType: r.str("entity_type"),
		SchemaVersion: r.str("schema_version"), SourceID: r.str("source_id"),
		ObservedAt: r.time("observed_at"), CreatedAt: r.time("created_at"),
		SpecificityScore: r.float("specificity_score"), SourcePriority: r.int("source_priority"),
		Fields: r.jsonMap("fields_json"), OriginalEntityID: r.str("original_entity_id"),
	}
	return o, r.err
}

// toEdge maps a relationship projection (relationship_get, edges, the
// listings): the relationship's properties, its type, and the ids and
// types of its two ends.
func toEdge(m map[string]any) (graph.Edge, error) {
	r := record{m: m}
	e := graph.Edge{
		Relationship: graph.Relationship{
			ID: r.str("id"), UserID: r.str("user_id"), Type: r.str("type"),
			SourceEntityID: r.str("source_entity_id"), TargetEntityID: r.str("target_entity_id"),
			Metadata: r.jsonMap("metadata_json"), Provenance: r.jsonStrings("provenance_json"),
			ObservationCount: r.int("observation_count"), CreatedAt: r.time("created_at"),
			LastObservationAt: r.time("last_observation_at"), EndedAt: r.time("ended_at"),
		},
		SourceType: r.str("source_type"), TargetType: r.str("target_type"),
	}
	return e, r.err
}

func toRelationship(m map[string]any) (graph.Relationship, error) {
	e, err := toEdge(m)
	return e.Relationship, err
}

func toRelationshipObservation(m map[string]any) (graph.RelationshipObservation, error) {
	r := record{m: m}
	o := graph.RelationshipObservation{
		ID: r.str("id"), UserID: r.str("user_id"), RelationshipID: r.str("relationship_id"),
		SourceID: r.str("source_id"), ObservedAt: r.time("observed_at"), CreatedAt: r.time("created_at"),
		SpecificityScore: r.float("specificity_score"), SourcePriority: r.int("source_priority"),
		Metadata: r.jsonMap("metadata_json"),
	}
	return o, r.err
}

func toTimelineEvent(m map[string]any) (graph.TimelineEvent, error) {
	r := record{m: m}
	ev := graph.TimelineEvent{
		ID: r.str("id"), UserID: r.str("user_id"), EntityID: r.str("entity_id"), EventType: r.str("event_type"),
		Timestamp: r.str("timestamp"), Time: r.time("time"), SourceID: r.str("source_id"),
		Properties: r.jsonMap("properties_json"),
	}
	return ev, r.err
}

func toOutboxEntry(m map[string]any) (graph.OutboxEntry, error) {
	r := record{m: m}
	e := graph.OutboxEntry{
		UserID: r.str("user_id"), EntityID: r.str("entity_id"), Seq: r.int64("seq"), EnqueuedAt: r.time("enqueued_at"),
	}
	return e, r.err
}

// mapRows maps each row's field key (or the row itself when key is empty)
// with to; the slice is the caller's.
func mapRows[T any](rows []map[string]any, key string, to func(map[string]any) (T, error)) ([]T, error) {
	out := make([]T, 0, len(rows))
	for _, row := range rows {
		m := row
		if key != "" {
			r := record{m: row}
			m = r.sub(key)
			if r.err != nil {
				return nil, r.err
			}
		}
		v, err := to(m)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// tupleList maps the one row of a statement that returns its results as
// one list of lists (entities_get, edges, traverse_edges): each list holds
// the values of columns, in order, and to maps it as a projection with
// those keys.
func tupleList[T any](rows []map[string]any, statement, key string, columns []string, to func(map[string]any) (T, error)) ([]T, error) {
	if len(rows) != 1 {
		return nil, fmt.Errorf("graph/neo4j: %s returned %d rows", statement, len(rows))
	}
	r := record{m: rows[0]}
	list := r.rows(key, columns...)
	if r.err != nil {
		return nil, r.err
	}
	return mapRows(list, "", to)
}

// entityColumns are the values of an entity in entities_get's lists, in
// order: the keys toEntity reads.
var entityColumns = []string{
	"id", "user_id", "entity_type", "canonical_name", "schema_version", "snapshot_json",
	"provenance_json", "observation_count", "last_observation_at", "created_at",
	"computed_at", "merged_into", "merged_at",
}

// edgeColumns are the values of a relationship in the lists of edges and
// traverse_edges, in order: the keys toEdge reads.
var edgeColumns = []string{
	"id", "user_id", "metadata_json", "provenance_json", "observation_count",
	"created_at", "last_observation_at", "ended_at", "type",
	"source_entity_id", "target_entity_id", "source_type", "target_type",
}

// pageRows maps the one row of a paged statement (observations_page,
// relationships_list, …): its total and its page of projections.
func pageRows[T any](rows []map[string]any, to func(map[string]any) (T, error)) ([]T, int, error) {
	if len(rows) != 1 {
		return nil, 0, fmt.Errorf("graph/neo4j: a paged statement returned %d rows, want 1", len(rows))
	}
	r := record{m: rows[0]}
	total := r.int("total")
	page := r.maps("page")
	if r.err != nil {
		return nil, 0, r.err
	}
	out, err := mapRows(page, "", to)
	return out, total, err
}

// Values Cairn sends. A map that Neo4j cannot hold as a property goes as
// JSON text (a *_json property); its storable fields also go as plain
// properties, so that the graph reads well in Neo4j's own tools.

// encodeJSON returns m as JSON text, an empty object for nil.
func encodeJSON[V any](m map[string]V) (string, error) {
	if m == nil {
		m = map[string]V{}
	}
	return jsoncodec.Encode(m)
}

// storableProps returns the fields of m that Neo4j can store as
// properties, as Neo4j types: strings, booleans, integers and floats
// (json.Number as whichever it holds), and non-empty lists of one of those
// kinds. Nested maps, nulls, mixed lists and the keys of reserved (the
// properties the statement sets itself) are left out: the *_json property
// keeps the whole value.
func storableProps(m map[string]any, reserved map[string]bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "" || reserved[k] {
			continue
		}
		if p, ok := storable(v); ok {
			out[k] = p
		}
	}
	return out
}

// storable converts one value; lists must be non-empty and of one kind.
func storable(v any) (any, bool) {
	if s, ok := scalar(v); ok {
		return s, true
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make([]any, len(list))
	kind := ""
	for i, e := range list {
		s, ok := scalar(e)
		if !ok {
			return nil, false
		}
		k := fmt.Sprintf("%T", s)
		if kind != "" && k != kind {
			return nil, false
		}
		kind, out[i] = k, s
	}
	return out, true
}

// scalar converts a scalar to the type the Neo4j driver sends.
func scalar(v any) (any, bool) {
	switch x := v.(type) {
	case string, bool, int64, float64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float32:
		return float64(x), true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return nil, false
}

// nullString is s, or nil (Cypher's null) when it is empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBytes is b as a byte array, or nil when it is empty.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// nullTime is t in UTC, or nil when it is zero.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// nullList is l, or nil when l is nil: the statements read a null list as
// "no filter", and the Neo4j driver would send a nil []string as an empty
// list, which matches nothing.
func nullList(l []string) any {
	if l == nil {
		return nil
	}
	return l
}

// direction is the $direction of the statements: Both when empty.
func direction(d graph.Direction) string {
	switch d {
	case graph.Outbound, graph.Inbound:
		return string(d)
	default:
		return string(graph.Both)
	}
}

func limitOr(p graph.Page, def int) int {
	if p.Limit <= 0 {
		return def
	}
	return p.Limit
}

// encodeValue returns any value as JSON text (a raw fragment's value).
func encodeValue(v any) (string, error) { return jsoncodec.Encode(v) }
