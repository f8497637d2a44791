package transfer

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/graph"
)

// maxIDLen is the longest id a tool call accepts (knowledge checks ids
// the same way).
const maxIDLen = 256

// checker applies to a line's values the checks a tool call applies to the
// same values: ids, type names, and the size of each field.
type checker struct {
	maxFieldBytes int
}

// id refuses an empty or overlong id.
func (c checker) id(field, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", field)
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("%s is %d bytes long; ids are at most %d", field, len(id), maxIDLen)
	}
	return nil
}

// entityType refuses what cannot name an entity type.
func (c checker) entityType(field, t string) error {
	if err := graph.ValidEntityTypeName(t); err != nil {
		return fmt.Errorf("%s %q is not a type name: 1..63 lower-case letters, digits and underscores, starting with a letter", field, truncate(t, 64))
	}
	return nil
}

// value refuses a value whose JSON encoding is over the field bound.
func (c checker) value(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s cannot be encoded: %v", path, err)
	}
	if len(b) > c.maxFieldBytes {
		return fmt.Errorf("%s is %d bytes as JSON; a field's value may be at most %d bytes (--max-field-bytes)", path, len(b), c.maxFieldBytes)
	}
	return nil
}

// fields checks every value of fields, in key order.
func (c checker) fields(prefix string, fields map[string]any) error {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := c.value(prefix+"."+k, fields[k]); err != nil {
			return err
		}
	}
	return nil
}

func (c checker) entity(e Entity) error {
	if err := c.id("entity id", e.ID); err != nil {
		return err
	}
	if err := c.entityType("entity type", e.Type); err != nil {
		return err
	}
	if e.MergedInto != "" {
		if err := c.id("merged_into", e.MergedInto); err != nil {
			return err
		}
	}
	if err := c.value("canonical_name", e.CanonicalName); err != nil {
		return err
	}
	return c.fields("snapshot", e.Snapshot)
}

func (c checker) observation(o graph.Observation) error {
	for _, f := range [][2]string{{"observation id", o.ID}, {"entity_id", o.EntityID}, {"source_id", o.SourceID}} {
		if err := c.id(f[0], f[1]); err != nil {
			return err
		}
	}
	if err := c.entityType("entity_type", o.EntityType); err != nil {
		return err
	}
	return c.fields("fields", o.Fields)
}

func (c checker) source(s graph.Source) error {
	if err := c.id("source id", s.ID); err != nil {
		return err
	}
	return c.fields("provenance", s.Provenance)
}

func (c checker) rawFragment(f graph.RawFragment) error {
	for _, x := range [][2]string{{"raw fragment id", f.ID}, {"entity_id", f.EntityID}, {"field", f.Field}} {
		if err := c.id(x[0], x[1]); err != nil {
			return err
		}
	}
	if err := c.entityType("entity_type", f.EntityType); err != nil {
		return err
	}
	return c.value("value", f.Value)
}

func (c checker) relationship(r graph.Relationship) error {
	for _, x := range [][2]string{{"relationship id", r.ID}, {"source_entity_id", r.SourceEntityID}, {"target_entity_id", r.TargetEntityID}} {
		if err := c.id(x[0], x[1]); err != nil {
			return err
		}
	}
	if !graph.ValidRelationshipTypeName(r.Type) {
		return fmt.Errorf("relationship type %q is not a type name", truncate(r.Type, 64))
	}
	return c.fields("metadata", r.Metadata)
}

func (c checker) relationshipObservation(o graph.RelationshipObservation) error {
	if err := c.id("relationship observation id", o.ID); err != nil {
		return err
	}
	if err := c.id("relationship_id", o.RelationshipID); err != nil {
		return err
	}
	return c.fields("metadata", o.Metadata)
}

func (c checker) memory(m Memory) error {
	if err := c.id("memory id", m.ID); err != nil {
		return err
	}
	if err := c.value("text", m.Text); err != nil {
		return err
	}
	if err := c.value("title", m.Title); err != nil {
		return err
	}
	for _, id := range m.EntityIDs {
		if err := c.id("entity_ids", id); err != nil {
			return err
		}
	}
	return c.fields("metadata", m.Metadata)
}

func (c checker) row(r Row) error {
	return c.fields(r.Table, r.Row)
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
