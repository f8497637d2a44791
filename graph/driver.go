package graph

import (
	"context"
	"time"
)

// Driver is what a graph backend implements. Callers use *Store instead.
type Driver interface {
	// Update runs fn in one read-write transaction and commits it if fn
	// returns nil. fn may be called more than once (a backend may retry a
	// transaction that lost a conflict), so it must not have side effects
	// outside the transaction.
	Update(ctx context.Context, fn func(DriverTx) error) error
	// View runs fn in one read-only transaction that sees a consistent state.
	View(ctx context.Context, fn func(DriverTx) error) error
	// ClaimOutbox leases up to c.Limit outbox entries that no lease holds
	// (never claimed, acknowledged with a stale seq, or whose lease ended
	// before c.Now) until c.Now+c.Lease, oldest enqueued first, and returns
	// them. It runs in a transaction of its own. Concurrent claims, in this
	// process or others on the same database, never return the same entry
	// while its lease runs.
	ClaimOutbox(ctx context.Context, c OutboxClaim) ([]OutboxEntry, error)
	// AckOutbox settles claimed entries: an entry whose seq is still the
	// stored one is deleted; one enqueued again since its claim (a newer
	// seq) stays and its lease is released, so that it is claimed again.
	// Entries that no longer exist are ignored.
	AckOutbox(ctx context.Context, entries []OutboxEntry) error
	// ReleaseOutbox ends the leases of claimed entries without settling
	// them, so that they can be claimed again at once: what a consumer
	// does when it could not process them (or is stopping).
	ReleaseOutbox(ctx context.Context, entries []OutboxEntry) error
	// Close releases the driver's resources.
	Close() error
}

// DriverTx holds the storage primitives of one transaction. Every method is
// scoped to the user id it is given: rows of other users do not exist for it.
// Methods that find nothing return an error wrapping ErrNotFound; inserts of
// an existing id return an error wrapping ErrConflict. Slices returned are
// never shared with the driver.
type DriverTx interface {
	// InsertSource stores a new source.
	InsertSource(ctx context.Context, s Source) error
	// Source returns a source by id.
	Source(ctx context.Context, userID, id string) (Source, error)
	// SourceByHash returns the user's source with that content hash.
	SourceByHash(ctx context.Context, userID, contentHash string) (Source, error)
	// EnsureSources returns, for each of srcs in order, its user's source
	// with its content hash: the one stored already, or else srcs' own,
	// which it stores and returns as it reads it back (a content hash given
	// twice stores the first and returns it for both). It is SourceByHash, then InsertSource when
	// that finds nothing, for each of srcs, in as few statements as the
	// backend can. A source to store whose id exists already (with another
	// hash) is an error wrapping ErrConflict; which of the others were
	// stored is then unspecified, so the caller must not commit.
	EnsureSources(ctx context.Context, srcs []Source) ([]Source, error)
	// ListSources returns a page of the user's sources that match f,
	// ordered by CreatedAt descending, then id ascending, and the total
	// number that match.
	ListSources(ctx context.Context, f SourceFilter) ([]Source, int, error)

	// PutEntity inserts the entity or replaces the stored one with the same id.
	PutEntity(ctx context.Context, e Entity) error
	// PutEntities does what PutEntity does for each of es, in as few
	// statements as the backend can (one UNWIND, one multi-row upsert):
	// what a store of many entities writes. The ids must be distinct.
	PutEntities(ctx context.Context, es []Entity) error
	// Entity returns an entity by id, merged or not.
	Entity(ctx context.Context, userID, id string) (Entity, error)
	// Entities returns the entities with these ids that exist, in the order
	// of ids.
	Entities(ctx context.Context, userID string, ids []string) ([]Entity, error)
	// ListEntities returns a page of entities ordered by LastObservationAt
	// descending, then id ascending, and the total number that match.
	ListEntities(ctx context.Context, f EntityFilter) ([]Entity, int, error)
	// ListEntityStats returns what ListEntities returns for f (same
	// entities, same order, same paging) without the snapshots and
	// provenance, which are most of an entity's bytes and of its decoding,
	// and with each entity's degrees: what ranking many entities needs.
	ListEntityStats(ctx context.Context, f EntityFilter) ([]EntityStat, error)
	// SetIdentifiers replaces the identifiers an entity can be found under.
	SetIdentifiers(ctx context.Context, userID, entityID string, ids []Identifier) error
	// SetEntityIdentifiers does what SetIdentifiers does for each entity of
	// sets, at once. The entity ids must be distinct.
	SetEntityIdentifiers(ctx context.Context, userID string, sets []EntityIdentifiers) error
	// EntitiesByIdentifier returns the unmerged entities with an identifier
	// equal to value, of entityType when it is not empty, ordered by id.
	EntitiesByIdentifier(ctx context.Context, userID, value, entityType string) ([]Entity, error)
	// EntityTypeCounts returns how many unmerged entities the user has of
	// each type.
	EntityTypeCounts(ctx context.Context, userID string) (map[string]int, error)
	// EntityTypes returns the types of which the user has unmerged
	// entities, sorted: the keys of EntityTypeCounts, in time that grows
	// with the number of types rather than of entities (an index skip
	// over the types, say), since every call that filters by readable
	// types asks it.
	EntityTypes(ctx context.Context, userID string) ([]string, error)

	// InsertObservation stores a new observation.
	InsertObservation(ctx context.Context, o Observation) error
	// InsertObservations stores new observations at once. If an id exists
	// already, or twice in obs, it returns an error wrapping ErrConflict;
	// which of the others were stored is then unspecified, so the caller
	// must not commit the transaction.
	InsertObservations(ctx context.Context, obs []Observation) error
	// Observation returns one observation by id.
	Observation(ctx context.Context, userID, id string) (Observation, error)
	// Observations returns a page of an entity's observations ordered by
	// ObservedAt descending, then id ascending, and their total.
	Observations(ctx context.Context, userID, entityID string, p Page) ([]Observation, int, error)
	// AllObservations returns every observation of an entity, in no
	// particular order; the reducer orders them itself.
	AllObservations(ctx context.Context, userID, entityID string) ([]Observation, error)
	// EntitiesObservations returns every observation of any of the
	// entities, in no particular order (callers group them by EntityID):
	// AllObservations of many entities in one query.
	EntitiesObservations(ctx context.Context, userID string, entityIDs []string) ([]Observation, error)
	// ObservationsByID returns the observations with these ids that exist,
	// in the order of ids (an id given twice gives its observation once, at
	// its first place).
	ObservationsByID(ctx context.Context, userID string, ids []string) ([]Observation, error)
	// ObservationsBySource returns the observations a source produced,
	// ordered by id.
	ObservationsBySource(ctx context.Context, userID, sourceID string) ([]Observation, error)
	// MoveObservations re-points every observation of entity from to entity
	// to and returns how many moved.
	MoveObservations(ctx context.Context, userID, from, to string) (int, error)

	// InsertRawFragment stores a field that no schema names.
	InsertRawFragment(ctx context.Context, f RawFragment) error
	// InsertRawFragments stores fragments at once; an existing id is an
	// ErrConflict as for InsertObservations, with the same consequence.
	InsertRawFragments(ctx context.Context, fs []RawFragment) error
	// RawFragments returns the user's raw fragments that q selects,
	// ordered by id, values decoded as observation fields are (numbers as
	// json.Number).
	RawFragments(ctx context.Context, q RawFragmentQuery) ([]RawFragment, error)

	// ReplaceTimelineEvents replaces every timeline event of an entity.
	ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []TimelineEvent) error
	// ReplaceEntityTimelines does what ReplaceTimelineEvents does for each
	// entity of timelines, at once. The entity ids must be distinct.
	ReplaceEntityTimelines(ctx context.Context, userID string, timelines []EntityTimeline) error
	// ListTimelineEvents returns a page of events ordered by Time
	// descending, then id ascending, and the total that match.
	ListTimelineEvents(ctx context.Context, f TimelineFilter) ([]TimelineEvent, int, error)

	// LockUser serialises, until the transaction ends, every transaction of
	// the user that changes the graph's structure, so that a cycle check and
	// the insert it guards are atomic with respect to concurrent writers.
	LockUser(ctx context.Context, userID string) error
	// PutRelationship inserts the relationship or replaces the stored one
	// with the same id and CreatedAt. A relationship created again after it
	// ended is a new row with a new CreatedAt (a new period of existence).
	// Both endpoints must be entities of the user (an error wrapping
	// ErrNotFound otherwise): a driver may keep their types with the edge.
	PutRelationship(ctx context.Context, r Relationship) error
	// PutRelationships does what PutRelationship does for each of rs, in
	// as few statements as the backend can. The (ID, CreatedAt) pairs must
	// be distinct. An endpoint that is not an entity of the user is an
	// error wrapping ErrNotFound; which of the others were stored is then
	// unspecified, so the caller must not commit.
	PutRelationships(ctx context.Context, rs []Relationship) error
	// Relationship returns the newest period of a relationship, live or
	// ended.
	Relationship(ctx context.Context, userID, id string) (Relationship, error)
	// Relationships returns what Relationship returns for each of ids that
	// exists, in the order of ids (an id given twice gives its relationship
	// once, at its first place): Relationship of many ids in one query.
	Relationships(ctx context.Context, userID string, ids []string) ([]Relationship, error)
	// ListRelationships returns a page of relationships ordered by CreatedAt
	// descending, then id ascending, and the total that match.
	ListRelationships(ctx context.Context, f RelationshipFilter) ([]Relationship, int, error)
	// Edges returns the edges live at q.At that touch any of q.EntityIDs in
	// q.Direction, with the types of both endpoints, ordered by id. Edges to
	// merged entities are included; the caller decides.
	Edges(ctx context.Context, q EdgeQuery) ([]Edge, error)
	// InsertRelationshipObservation stores a new relationship observation.
	InsertRelationshipObservation(ctx context.Context, o RelationshipObservation) error
	// InsertRelationshipObservations stores new relationship observations
	// at once. If an id exists already, or twice in obs, it returns an
	// error wrapping ErrConflict; which of the others were stored is then
	// unspecified, so the caller must not commit the transaction.
	InsertRelationshipObservations(ctx context.Context, obs []RelationshipObservation) error
	// RelationshipObservations returns every observation of a relationship,
	// ordered by ObservedAt descending, then id ascending.
	RelationshipObservations(ctx context.Context, userID, relationshipID string) ([]RelationshipObservation, error)
	// RelationshipsObservations returns every observation of any of the
	// relationships, in no particular order (callers group them by
	// RelationshipID): RelationshipObservations of many in one query.
	RelationshipsObservations(ctx context.Context, userID string, relationshipIDs []string) ([]RelationshipObservation, error)
	// RelationshipObservationsBySource returns the relationship
	// observations a source produced, ordered by id: what an erasure of
	// the source takes out of relationships (ObservationsBySource is its
	// entity observations).
	RelationshipObservationsBySource(ctx context.Context, userID, sourceID string) ([]RelationshipObservation, error)

	// EnqueueOutbox records, with the transaction's other writes, that the
	// entities changed: each gets an outbox entry, or its existing entry a
	// new seq (the time it was first enqueued stays). at is the time of
	// the change.
	EnqueueOutbox(ctx context.Context, userID string, entityIDs []string, at time.Time) error
}

// EntityStat is an entity without its snapshot and provenance.
type EntityStat struct {
	ID                string
	Type              string
	ObservationCount  int
	LastObservationAt time.Time
	MergedInto        string // empty unless merged
	// TextSig is the signature of the entity's text as it was written
	// (EntityTextSig), when EntityFilter.TextSigs asked for it; nil
	// otherwise, or when the driver keeps none for the entity.
	TextSig TextSig
	// Degrees counts the live relationships at either end of which the
	// entity is, by the type of the entity at the other end (a
	// relationship from an entity to itself counts at both ends): one
	// Degree per type, in no particular order; nil when there are none.
	// Callers that may not read every type add up those they may.
	Degrees []Degree
}

// Degree is how many live relationships an entity has with entities of one
// type. A context load reads one list of them for every entity of a user:
// a short slice costs less to build and to add up than a map.
type Degree struct {
	Type  string
	Count int
}

// AddDegree adds n relationships with entities of type typ to ds.
func AddDegree(ds []Degree, typ string, n int) []Degree {
	for i := range ds {
		if ds[i].Type == typ {
			ds[i].Count += n
			return ds
		}
	}
	return append(ds, Degree{Type: typ, Count: n})
}

// Reacher is an optional capability of a DriverTx: it answers a path query
// inside the backend (a recursive query, say) rather than by one Edges call
// per hop. CreateRelationship's cycle check uses it when the driver's
// transaction has it, and Tx.ShortestPath otherwise.
type Reacher interface {
	// Reach returns exactly what Tx.ShortestPath returns for q: the entity
	// ids of a shortest path From → … → To over edges of q.Types live at
	// q.At in q.Direction, the same one among paths of equal length (each
	// entity's predecessor is the lowest-id entity of the previous
	// breadth-first level with an edge to it), or nil when To cannot be
	// reached. Like ShortestPath, it is exhaustive.
	Reach(ctx context.Context, q PathQuery) ([]string, error)
}

// Expander is an optional capability of a DriverTx: it reads in one round
// trip every edge a breadth-first traversal may follow, where the portable
// Traverse reads them one hop at a time with Edges. Tx.Traverse uses it when
// the driver's transaction has it; the answer is the same (TraverseByHop is
// the portable oracle the conformance suite holds it to).
type Expander interface {
	// ExpandEdges returns, sorted as Edges sorts them, at least every edge
	// that Edges would return, with q's Direction, Types and At, for the
	// entities the traversal expands: the live edges that touch q.Start or an
	// entity fewer than q.MaxHops hops from it through entities of
	// q.EntityTypes (nil: any), as seen in q.Direction. It may hold more
	// edges than the traversal follows, but none with an end other than
	// q.Start whose type is outside q.EntityTypes: what the caller may not
	// read does not leave the backend. When q.Start does not exist, it
	// returns a *NotFoundError.
	ExpandEdges(ctx context.Context, q TraverseQuery) ([]Edge, error)
}

// TypedRelationshipGetter is an optional capability of a DriverTx: it reads
// a relationship whose type the caller knows, as CreateRelationship does,
// where a backend finds it faster by type (Neo4j indexes relationship
// properties per type, so an id alone means a scan of the user's
// relationships).
type TypedRelationshipGetter interface {
	// RelationshipOfType returns exactly what Relationship returns for id
	// when the relationship's type is typ, and a *NotFoundError otherwise.
	RelationshipOfType(ctx context.Context, userID, typ, id string) (Relationship, error)
}

// Now returns the current time as every graph row records it: UTC, truncated
// to the microsecond that every backend can store exactly.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
