package graph

import "time"

// Source kinds: where a source's content came from.
const (
	SourceStructured   = "structured"   // the canonical JSON of a structured store call
	SourceFile         = "file"         // a file's bytes
	SourceCorrection   = "correction"   // a correction made through the correct tool
	SourceRelationship = "relationship" // the arguments of a create_relationship call
	SourceMerge        = "merge"        // the record of a merge_entities call
)

// Source is content-addressed source material: the same content stored twice
// by the same user is one Source.
type Source struct {
	ID               string
	UserID           string
	ContentHash      string // hex SHA-256 of the content
	Kind             string // one of the Source* kinds
	MimeType         string
	OriginalFilename string
	Size             int64
	Provenance       map[string]any
	CreatedAt        time.Time
}

// Observation is what one source said about one entity at one time. It is
// immutable, except that merging moves it to another entity (OriginalEntityID
// keeps where it was first recorded).
type Observation struct {
	ID               string
	UserID           string
	EntityID         string
	EntityType       string
	SchemaVersion    string
	SourceID         string
	ObservedAt       time.Time
	CreatedAt        time.Time
	SpecificityScore float64
	SourcePriority   int
	Fields           map[string]any
	OriginalEntityID string
}

// Entity is a node of the graph with its current snapshot, as computed by the
// reducer from its observations, and the observation each field came from.
type Entity struct {
	ID                string
	UserID            string
	Type              string
	CanonicalName     string
	SchemaVersion     string
	Snapshot          map[string]any
	Provenance        map[string]string // field → observation id
	ObservationCount  int
	LastObservationAt time.Time
	CreatedAt         time.Time
	ComputedAt        time.Time
	MergedInto        string // non-empty once merged into another entity
	MergedAt          time.Time
}

// Merged reports whether e was merged into another entity.
func (e Entity) Merged() bool { return e.MergedInto != "" }

// RawFragment is a field that a source gave for an entity but the entity's
// schema does not name. It is kept, never dropped, for schema evolution.
type RawFragment struct {
	ID         string
	UserID     string
	SourceID   string
	EntityID   string
	EntityType string
	Field      string
	Value      any
	CreatedAt  time.Time
}

// RawFragmentQuery selects raw fragments of one user.
type RawFragmentQuery struct {
	UserID string
	// EntityType keeps the fragments of one entity type; empty keeps every
	// type.
	EntityType string
	// EntityIDs keeps the fragments recorded for these entities (as they
	// were recorded: a merge does not move fragments); nil keeps every
	// entity, an empty non-nil slice none.
	EntityIDs []string
}

// Identifier is a normalised value (a name, an email, a tax id) under which
// an entity can be found.
type Identifier struct {
	Field string
	Value string
}

// EntityIdentifiers are every identifier of one entity, for
// DriverTx.SetEntityIdentifiers.
type EntityIdentifiers struct {
	EntityID    string
	Identifiers []Identifier
}

// EntityTimeline is every timeline event of one entity, for
// DriverTx.ReplaceEntityTimelines.
type EntityTimeline struct {
	EntityID string
	Events   []TimelineEvent
}

// TimelineEvent is a dated event derived from a date field of an entity.
type TimelineEvent struct {
	ID         string
	UserID     string
	EntityID   string
	EventType  string
	Timestamp  string    // the date as the source gave it, ISO 8601
	Time       time.Time // Timestamp parsed, for ordering and filters
	SourceID   string
	Properties map[string]any
}

// Page selects a window of an ordered result.
type Page struct {
	Limit  int // 0 means the method's default
	Offset int
}

// EntityFilter selects entities for ListEntities.
type EntityFilter struct {
	UserID string
	// Types restricts the result to these entity types; nil means any type,
	// an empty non-nil slice means none.
	Types         []string
	IncludeMerged bool
	Page          Page
	// TextSigs asks ListEntityStats for each entity's TextSig, which it
	// leaves nil otherwise (98 bytes an entity that a caller without a
	// word to look for has no use for). ListEntities ignores it.
	TextSigs bool
	// WithoutDegrees tells ListEntityStats that the caller does not read
	// EntityStat.Degrees (an entity search by meaning), so that a driver
	// may leave them nil rather than count every live relationship of the
	// user; a driver may count them anyway. ListEntities ignores it.
	WithoutDegrees bool
}

// SourceFilter selects sources for ListSources.
type SourceFilter struct {
	UserID string
	// Kind keeps the sources of one kind (SourceFile, …); empty keeps
	// every kind.
	Kind string
	// EntityTypes, when not nil, keeps the sources of kind SourceFile and
	// those that produced an observation of an entity of one of these
	// types: what a caller who may read only these types may see of the
	// sources (a file's consent is its own, which the caller applies with
	// ExcludeIDs). A source that produced no entity observation (a
	// relationship's, a merge's) is left out. nil keeps every source, an
	// empty non-nil slice the files only.
	EntityTypes []string
	// ExcludeIDs are sources left out, and not counted.
	ExcludeIDs []string
	Page       Page
}

// TimelineFilter selects timeline events for ListTimelineEvents.
type TimelineFilter struct {
	UserID    string
	EventType string
	SourceID  string
	EntityID  string
	After     time.Time // exclusive; zero means unbounded
	Before    time.Time // exclusive; zero means unbounded
	// EntityTypes restricts events to entities of these types; nil means any.
	EntityTypes []string
	Page        Page
}
