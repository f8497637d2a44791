package cypher

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	entityTypeName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	// relTypeName agrees with graph.ValidRelationshipTypeName: a type the
	// graph package accepts must be one Neo4j can store.
	relTypeName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
)

// reservedLabels are the labels of Cairn's own nodes. An entity type whose
// label would be one of them is refused: its entities would match the
// statements that read sources, observations or the outbox.
var reservedLabels = []string{
	"Entity", "Source", "Observation", "RawFragment", "Identifier", "TimelineEvent",
	"RelationshipObservation", "OutboxEntry", "UserLock", "CairnMigration", "CairnMigrationLock",
	"EntityKey",
}

// reservedRelTypes are the relationship types of Cairn's own edges (from a
// source to what it produced, from an observation to its entity, …). A
// relationship type of the truth model may not take one of them.
var reservedRelTypes = []string{"PRODUCED", "OBSERVES", "IDENTIFIED_BY", "HAS_EVENT"}

// Label returns the Neo4j label of an entity type: the normalised type name
// (lower-case letters, digits and underscores, starting with a letter, at
// most 63 bytes) in UpperCamelCase, as Neo4j names labels: company →
// Company, bank_account → BankAccount. An underscore before a digit stays
// (tax_2024 → Tax_2024), so that two type names never share a label. A name
// that does not match, or whose label is one of Cairn's own, is an error.
func Label(entityType string) (string, error) {
	if !entityTypeName.MatchString(entityType) {
		return "", fmt.Errorf("cypher: entity type %q is not a normalised type name (^[a-z][a-z0-9_]{0,62}$)", entityType)
	}
	var b strings.Builder
	upper := true
	for i := 0; i < len(entityType); i++ {
		c := entityType[i]
		switch {
		case c == '_' && i+1 < len(entityType) && entityType[i+1] >= 'a' && entityType[i+1] <= 'z':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			upper = false
		default:
			b.WriteByte(c)
			upper = false
		}
	}
	label := b.String()
	if slices.Contains(reservedLabels, label) {
		return "", fmt.Errorf("cypher: entity type %q would take the label %s, which Cairn's own nodes use", entityType, label)
	}
	return label, nil
}

// RelType returns t as a Neo4j relationship type after checking it: upper-
// case letters, digits and underscores, starting with a letter, at most 64
// bytes, and not one of the types of Cairn's own edges.
func RelType(t string) (string, error) {
	if !relTypeName.MatchString(t) {
		return "", fmt.Errorf("cypher: relationship type %q is not a valid type name (^[A-Z][A-Z0-9_]{0,63}$)", t)
	}
	if slices.Contains(reservedRelTypes, t) {
		return "", fmt.Errorf("cypher: relationship type %s is reserved for Cairn's own edges", t)
	}
	return t, nil
}
