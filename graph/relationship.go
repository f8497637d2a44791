package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"time"

	"github.com/cairnkg/cairn/cypher"
)

// Built-in relationship types of the Neotoma truth model.
const (
	PartOf      = "PART_OF"
	Corrects    = "CORRECTS"
	RefersTo    = "REFERS_TO"
	Settles     = "SETTLES"
	DuplicateOf = "DUPLICATE_OF"
	DependsOn   = "DEPENDS_ON"
	Supersedes  = "SUPERSEDES"
)

// BuiltinRelationshipTypes lists the built-in types in a stable order.
var BuiltinRelationshipTypes = []string{PartOf, Corrects, RefersTo, Settles, DuplicateOf, DependsOn, Supersedes}

// acyclicTypes are the built-in types whose edges may never form a cycle.
var acyclicTypes = []string{PartOf, DependsOn, Supersedes, Corrects}

// IsAcyclic reports whether edges of type t must never form a cycle
// (self-loops included).
func IsAcyclic(t string) bool { return slices.Contains(acyclicTypes, t) }

// IsBuiltinRelationshipType reports whether t is one of the built-in types.
func IsBuiltinRelationshipType(t string) bool { return slices.Contains(BuiltinRelationshipTypes, t) }

var typeName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// reservedTypes are the types of Cairn's own edges in Neo4j (from a source
// to what it produced, …; cypher.RelType refuses them too): no relationship
// of the truth model may take one, on any backend.
var reservedTypes = []string{"PRODUCED", "OBSERVES", "IDENTIFIED_BY", "HAS_EVENT"}

// ValidRelationshipTypeName reports whether t is a well-formed type name:
// upper-case letters, digits and underscores, starting with a letter, at most
// 64 characters, and not one of Cairn's own edges' types. Whether it is also
// known (built in, registered by a schema or by the user's first use) is the
// caller's check.
func ValidRelationshipTypeName(t string) bool {
	return typeName.MatchString(t) && !slices.Contains(reservedTypes, t)
}

// RelationshipID is the deterministic id of the edge (type, source, target).
// The user needs no place in the hash: entity ids already depend on it.
func RelationshipID(relType, sourceEntityID, targetEntityID string) string {
	h := sha256.Sum256([]byte(relType + "\x00" + sourceEntityID + "\x00" + targetEntityID))
	return "rel_" + hex.EncodeToString(h[:12])
}

// Relationship is a typed, directed edge between two entities of one user,
// with metadata reduced from its observations. A relationship that was
// deleted or superseded keeps its row with EndedAt set, so that reads with
// an as-of time see the graph as it was.
type Relationship struct {
	ID                string
	UserID            string
	Type              string
	SourceEntityID    string
	TargetEntityID    string
	Metadata          map[string]any
	Provenance        map[string]string // metadata field → observation id
	ObservationCount  int
	CreatedAt         time.Time
	LastObservationAt time.Time
	EndedAt           time.Time // zero while the edge is live
}

// Live reports whether the edge existed at time at (zero at means now).
func (r Relationship) Live(at time.Time) bool {
	if at.IsZero() {
		return r.EndedAt.IsZero()
	}
	return !r.CreatedAt.After(at) && (r.EndedAt.IsZero() || r.EndedAt.After(at))
}

// RelationshipObservation is what one source said about one relationship's
// metadata. Like entity observations, it is immutable.
type RelationshipObservation struct {
	ID               string
	UserID           string
	RelationshipID   string
	SourceID         string
	ObservedAt       time.Time
	CreatedAt        time.Time
	SpecificityScore float64
	SourcePriority   int
	Metadata         map[string]any
}

// Direction selects which edges of an entity to follow.
type Direction string

// Directions, relative to the entity asked about.
const (
	Outbound Direction = "outbound"
	Inbound  Direction = "inbound"
	Both     Direction = "both"
)

// RelationshipFilter selects relationships for ListRelationships.
type RelationshipFilter struct {
	UserID    string
	EntityID  string
	Direction Direction // empty means Both
	Type      string    // empty means any type
	// At answers as the graph was at that time; zero means now (live edges only).
	At time.Time
	// EntityTypes, when non-nil, drops edges whose other endpoint is not of
	// one of these types (consent filtering).
	EntityTypes []string
	Page        Page
}

// EdgeQuery asks for the edges touching a set of entities, for traversals.
type EdgeQuery struct {
	UserID    string
	EntityIDs []string
	Direction Direction
	Types     []string  // nil means any type
	At        time.Time // zero means now
}

// Edge is a relationship with the types of both endpoints, so that a
// traversal can filter on them without another round trip.
type Edge struct {
	Relationship
	SourceType string
	TargetType string
}

// ValidEntityTypeName checks that t can name an entity type on every
// backend: lower-case letters, digits and underscores, starting with a
// letter, at most 63 bytes, and not a name whose Neo4j label (cypher.Label)
// is one of Cairn's own node labels. The error says why.
func ValidEntityTypeName(t string) error {
	_, err := cypher.Label(t)
	return err
}
