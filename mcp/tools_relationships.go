package mcp

import (
	"context"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// relationshipTypeText describes the relationship_type argument.
const relationshipTypeText = "PART_OF, CORRECTS, REFERS_TO, SETTLES, DUPLICATE_OF, DEPENDS_ON, SUPERSEDES, or a type a schema registers"

func directionShape(p *jsonschema.Schema) {
	enum(p, string(graph.Inbound), string(graph.Outbound), string(graph.Both))
	setDefault(p, string(graph.Both))
}

// --- create_relationship ---

// CreateRelationshipIn are the arguments of create_relationship.
type CreateRelationshipIn struct {
	RelationshipType string         `json:"relationship_type" jsonschema:"PART_OF, CORRECTS, REFERS_TO, SETTLES, DUPLICATE_OF, DEPENDS_ON, SUPERSEDES, a schema's own, or a new one (upper-case letters, digits and underscores, e.g. WORKS_AT), registered on first use"`
	SourceEntityID   string         `json:"source_entity_id"`
	TargetEntityID   string         `json:"target_entity_id"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// CreateRelationshipOut is the relationship.
type CreateRelationshipOut struct {
	RelationshipOut
	Created *bool `json:"created,omitempty" jsonschema:"false when the relationship already existed (same type, source and target); absent without graph read, since whether it existed is graph data"`
	// RelationshipTypeCreated is true when this call registered the type
	// for the user (its first use).
	RelationshipTypeCreated *bool `json:"relationship_type_created,omitempty" jsonschema:"true when this call registered the relationship type for the user (its first use; not acyclic); absent without graph read"`
}

// shapeRelationshipArgs bounds the arguments of one relationship, given to
// create_relationship or as an item of create_relationships.
func shapeRelationshipArgs(s *jsonschema.Schema) {
	maxLen(prop(s, "relationship_type"), 64)
	maxLen(prop(s, "source_entity_id"), idLimit)
	maxLen(prop(s, "target_entity_id"), idLimit)
}

func createRelationshipTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "create_relationship",
		title: "Create relationship",
		description: "Create a typed, directed relationship between two entities; repeated, it adds an observation of its metadata. " +
			"PART_OF, DEPENDS_ON, SUPERSEDES and CORRECTS refuse cycles (CYCLE_DETECTED, with its path). " +
			"A new type (e.g. WORKS_AT) is registered on first use.",
		toolset: ToolsetRelationships, ann: additive, budget: BudgetList, requires: writes(consent.ResourceGraph),
		shape: shapeRelationshipArgs,
	}, func(ctx context.Context, call *Call, in CreateRelationshipIn) (CreateRelationshipOut, error) {
		newTypes, err := d.Knowledge.RegisterRelationshipTypes(ctx, call.Caller(), []string{in.RelationshipType})
		if err != nil {
			return CreateRelationshipOut{}, err
		}
		rel, created, err := d.Knowledge.CreateRelationship(ctx, call.Caller(), knowledge.RelationshipRequest{
			Type: in.RelationshipType, SourceEntityID: in.SourceEntityID, TargetEntityID: in.TargetEntityID, Metadata: in.Metadata,
		})
		if err != nil {
			return CreateRelationshipOut{}, err
		}
		out := CreateRelationshipOut{RelationshipOut: writtenRelationship(call, rel)}
		if call.May(consent.Read, consent.ResourceGraph) {
			out.Created = &created
			if len(newTypes) > 0 {
				first := true
				out.RelationshipTypeCreated = &first
			}
		}
		return out, nil
	})
}

// --- create_relationships ---

// CreateRelationshipsIn are the arguments of create_relationships.
type CreateRelationshipsIn struct {
	Relationships []CreateRelationshipIn `json:"relationships"`
}

// RelationshipResultOut is the outcome of one relationship of
// create_relationships.
type RelationshipResultOut struct {
	Status string     `json:"status" jsonschema:"created, existing, failed, or written without graph read"`
	ID     string     `json:"id,omitempty"`
	Error  *ErrorBody `json:"error,omitempty"`
}

// CreateRelationshipsOut is one result per relationship asked for, in
// order, and how many ended each way.
type CreateRelationshipsOut struct {
	Results  []RelationshipResultOut `json:"results"`
	Created  *int                    `json:"created,omitempty"`
	Existing *int                    `json:"existing,omitempty"`
	Failed   int                     `json:"failed"`
	// RelationshipTypesCreated are the types this call registered for the
	// user (their first use).
	RelationshipTypesCreated []string `json:"relationship_types_created,omitempty" jsonschema:"the relationship types this call registered for the user (their first use); absent without graph read"`
}

// completeLists answers every result, however many.
func (CreateRelationshipsOut) completeLists() []string { return []string{"results"} }

// Statuses of a create_relationships result.
const (
	statusCreated  = "created"
	statusExisting = "existing"
	statusFailed   = "failed"
	// statusWritten is created or existing, for a caller without graph
	// read, who may not learn which.
	statusWritten = "written"
)

func createRelationshipsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "create_relationships",
		title: "Create relationships",
		description: "Create 1..1000 relationships in one call, each as create_relationship does: use it for more than one. " +
			"Each gets its result in order (created, existing, or failed with its error); a failure does not stop the others.",
		toolset: ToolsetRelationships, ann: additive, budget: BudgetList, requires: writes(consent.ResourceGraph),
		shape: func(s *jsonschema.Schema) {
			list := prop(s, "relationships")
			lo, hi := 1, knowledge.MaxRelationshipsPerCall
			list.MinItems, list.MaxItems = &lo, &hi
			shapeRelationshipArgs(list.Items)
			// create_relationship's description of the types is in the
			// same tools/list.
			prop(list.Items, "relationship_type").Description = "as for create_relationship"
		},
	}, func(ctx context.Context, call *Call, in CreateRelationshipsIn) (CreateRelationshipsOut, error) {
		reqs := mapSlice(in.Relationships, func(r CreateRelationshipIn) knowledge.RelationshipRequest {
			return knowledge.RelationshipRequest{Type: r.RelationshipType, SourceEntityID: r.SourceEntityID, TargetEntityID: r.TargetEntityID, Metadata: r.Metadata}
		})
		newTypes, err := d.Knowledge.RegisterRelationshipTypes(ctx, call.Caller(), mapSlice(reqs, func(r knowledge.RelationshipRequest) string { return r.Type }))
		if err != nil {
			return CreateRelationshipsOut{}, err
		}
		results, err := d.Knowledge.CreateRelationships(ctx, call.Caller(), reqs)
		if err != nil {
			return CreateRelationshipsOut{}, err
		}
		// Whether an edge existed is graph data: without graph read a
		// result says only that it was written, as create_relationship
		// leaves out created.
		mayRead := call.May(consent.Read, consent.ResourceGraph)
		out := CreateRelationshipsOut{Results: make([]RelationshipResultOut, len(results))}
		var created, existing int
		for i, r := range results {
			switch {
			case r.Err != nil:
				e := toError(r.Err).Body
				out.Results[i] = RelationshipResultOut{Status: statusFailed, Error: &e}
				out.Failed++
				continue
			case !mayRead:
				out.Results[i].Status = statusWritten
			case r.Created:
				out.Results[i].Status = statusCreated
				created++
			default:
				out.Results[i].Status = statusExisting
				existing++
			}
			out.Results[i].ID = r.Relationship.ID
		}
		if mayRead {
			out.Created, out.Existing = &created, &existing
		}
		if mayRead && len(newTypes) > 0 {
			out.RelationshipTypesCreated = newTypes
		}
		return out, nil
	})
}

// --- delete_relationship ---

// RelationshipKeyIn names a relationship by its (type, source, target).
type RelationshipKeyIn struct {
	RelationshipType string `json:"relationship_type"`
	SourceEntityID   string `json:"source_entity_id"`
	TargetEntityID   string `json:"target_entity_id"`
}

func relationshipKeyShape(s *jsonschema.Schema) {
	maxLen(prop(s, "relationship_type"), 64)
	maxLen(prop(s, "source_entity_id"), idLimit)
	maxLen(prop(s, "target_entity_id"), idLimit)
}

func deleteRelationshipTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "delete_relationship",
		title:       "Delete relationship",
		description: "End a live relationship: present reads stop returning it; reads with `at` in its lifetime still see it.",
		toolset:     ToolsetRelationships, ann: destroys, budget: BudgetList, requires: writes(consent.ResourceGraph),
		shape: relationshipKeyShape,
	}, func(ctx context.Context, call *Call, in RelationshipKeyIn) (RelationshipOut, error) {
		rel, err := d.Knowledge.DeleteRelationship(ctx, call.Caller(), in.RelationshipType, in.SourceEntityID, in.TargetEntityID)
		if err != nil {
			return RelationshipOut{}, err
		}
		return writtenRelationship(call, rel), nil
	})
}

// writtenRelationship is the answer to a relationship write: the whole
// relationship with graph read consent; without it, only what the caller
// named (type and endpoints), the id (a hash of them) and ended_at (set by
// a delete), since the metadata merged from earlier observations and when
// the edge was created are graph data it may not read.
func writtenRelationship(call *Call, rel graph.Relationship) RelationshipOut {
	out := relationshipOut(rel)
	if !call.May(consent.Read, consent.ResourceGraph) {
		out.Metadata, out.CreatedAt = nil, ""
	}
	return out
}

// --- list_relationships ---

// ListRelationshipsIn are the arguments of list_relationships.
type ListRelationshipsIn struct {
	EntityID         string  `json:"entity_id"`
	Direction        *string `json:"direction,omitempty"`
	RelationshipType *string `json:"relationship_type,omitempty"`
	At               *string `json:"at,omitempty" jsonschema:"ISO 8601 time: as they were then"`
	Limit            *int    `json:"limit,omitempty"`
	Offset           *int    `json:"offset,omitempty"`
}

// ListRelationshipsOut is a page of relationships, newest first.
type ListRelationshipsOut struct {
	Relationships []RelationshipOut `json:"relationships"`
	Total         int               `json:"total"`
	Limit         int               `json:"limit"`
	Offset        int               `json:"offset"`
}

func listRelationshipsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_relationships",
		title:       "List relationships",
		description: "List an entity's relationships (edges), newest first; for the entities at their other ends use retrieve_related_entities.",
		toolset:     ToolsetRelationships, ann: readOnly, budget: BudgetList, requires: reads(consent.ResourceGraph),
		shape: func(s *jsonschema.Schema) {
			pageShape(s)
			directionShape(prop(s, "direction"))
			maxLen(prop(s, "entity_id"), idLimit)
			maxLen(prop(s, "relationship_type"), 64)
			maxLen(prop(s, "at"), 64)
		},
	}, func(ctx context.Context, call *Call, in ListRelationshipsIn) (ListRelationshipsOut, error) {
		at, err := optionalTime("at", in.At)
		if err != nil {
			return ListRelationshipsOut{}, err
		}
		p := page(in.Limit, in.Offset)
		rels, total, err := d.Knowledge.ListRelationships(ctx, call.Caller(), knowledge.RelationshipQuery{
			EntityID: in.EntityID, Direction: graph.Direction(deref(in.Direction)), Type: deref(in.RelationshipType), At: at, Page: p,
		})
		if err != nil {
			return ListRelationshipsOut{}, err
		}
		return ListRelationshipsOut{Relationships: mapSlice(rels, relationshipOut), Total: total, Limit: p.Limit, Offset: p.Offset}, nil
	})
}

// --- get_relationship_snapshot ---

// RelationshipSnapshotOut is a relationship's merged metadata with
// provenance, and the observations it came from.
type RelationshipSnapshotOut struct {
	Snapshot     RelationshipSnapshot         `json:"snapshot"`
	Observations []RelationshipObservationOut `json:"observations"`
}

// RelationshipSnapshot is the reduced state of a relationship.
type RelationshipSnapshot struct {
	RelationshipKey   string            `json:"relationship_key" jsonschema:"{type}:{source}:{target}"`
	ID                string            `json:"id"`
	RelationshipType  string            `json:"relationship_type"`
	SourceEntityID    string            `json:"source_entity_id"`
	TargetEntityID    string            `json:"target_entity_id"`
	SchemaVersion     string            `json:"schema_version"`
	Snapshot          map[string]any    `json:"snapshot" jsonschema:"metadata merged from every observation"`
	ComputedAt        string            `json:"computed_at"`
	ObservationCount  int               `json:"observation_count"`
	LastObservationAt string            `json:"last_observation_at"`
	Provenance        map[string]string `json:"provenance" jsonschema:"metadata field → observation id"`
	UserID            string            `json:"user_id"`
	CreatedAt         string            `json:"created_at"`
	EndedAt           string            `json:"ended_at,omitempty"`
}

// RelationshipObservationOut is one observation of a relationship.
type RelationshipObservationOut struct {
	ID               string         `json:"id"`
	SourceID         string         `json:"source_id"`
	ObservedAt       string         `json:"observed_at"`
	SpecificityScore float64        `json:"specificity_score"`
	SourcePriority   int            `json:"source_priority"`
	Metadata         map[string]any `json:"metadata"`
}

func getRelationshipSnapshotTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "get_relationship_snapshot",
		title:       "Get relationship snapshot",
		description: "A relationship's metadata merged from its observations, with the observation each field came from.",
		toolset:     ToolsetRelationships, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceGraph),
		shape: relationshipKeyShape,
	}, func(ctx context.Context, call *Call, in RelationshipKeyIn) (RelationshipSnapshotOut, error) {
		rel, obs, err := d.Knowledge.RelationshipSnapshot(ctx, call.Caller(), in.RelationshipType, in.SourceEntityID, in.TargetEntityID)
		if err != nil {
			return RelationshipSnapshotOut{}, err
		}
		return RelationshipSnapshotOut{
			Snapshot: RelationshipSnapshot{
				RelationshipKey: rel.Type + ":" + rel.SourceEntityID + ":" + rel.TargetEntityID,
				ID:              rel.ID, RelationshipType: rel.Type, SourceEntityID: rel.SourceEntityID, TargetEntityID: rel.TargetEntityID,
				SchemaVersion: "1.0", Snapshot: orEmpty(rel.Metadata), ComputedAt: ts(rel.LastObservationAt),
				ObservationCount: rel.ObservationCount, LastObservationAt: ts(rel.LastObservationAt),
				Provenance: rel.Provenance, UserID: rel.UserID, CreatedAt: ts(rel.CreatedAt), EndedAt: ts(rel.EndedAt),
			},
			Observations: mapSlice(obs, func(o graph.RelationshipObservation) RelationshipObservationOut {
				return RelationshipObservationOut{
					ID: o.ID, SourceID: o.SourceID, ObservedAt: ts(o.ObservedAt), SpecificityScore: o.SpecificityScore,
					SourcePriority: o.SourcePriority, Metadata: orEmpty(o.Metadata),
				}
			}),
		}, nil
	})
}

// --- retrieve_related_entities ---

// RelatedIn are the arguments of retrieve_related_entities.
type RelatedIn struct {
	EntityID          string   `json:"entity_id"`
	RelationshipTypes []string `json:"relationship_types,omitempty" jsonschema:"follow only these types"`
	Direction         *string  `json:"direction,omitempty"`
	MaxHops           *int     `json:"max_hops,omitempty"`
	IncludeEntities   *bool    `json:"include_entities,omitempty" jsonschema:"with each entity's snapshot"`
	At                *string  `json:"at,omitempty" jsonschema:"ISO 8601 time: the graph as it was then"`
}

// RelatedEntityOut is an entity a traversal reached.
type RelatedEntityOut struct {
	ID              string         `json:"id"`
	EntityType      string         `json:"entity_type"`
	CanonicalName   string         `json:"canonical_name"`
	Snapshot        map[string]any `json:"snapshot,omitempty"`
	Hops            int            `json:"hops" jsonschema:"the hop at which the entity was first reached"`
	Path            []string       `json:"path" jsonschema:"entity ids of one shortest path, from the start to this entity"`
	RelationshipIDs []string       `json:"relationship_ids" jsonschema:"the relationships along path"`
}

// RelatedOut is the neighbourhood found by a traversal.
type RelatedOut struct {
	Entities           []RelatedEntityOut `json:"entities"`
	Relationships      []RelationshipOut  `json:"relationships"`
	TotalEntities      int                `json:"total_entities"`
	TotalRelationships int                `json:"total_relationships"`
	HopsTraversed      int                `json:"hops_traversed"`
	Truncated          bool               `json:"truncated" jsonschema:"true when a cap on visited or returned entities cut the traversal short"`
}

func retrieveRelatedEntitiesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retrieve_related_entities",
		title: "Retrieve related entities",
		description: "The entities up to max_hops relationships away from one, each once, with the hop it was first reached at and " +
			"a shortest path; deterministic, capped (truncated says when).",
		toolset: ToolsetRelationships, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceGraph),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "entity_id"), idLimit)
			directionShape(prop(s, "direction"))
			bounds(prop(s, "max_hops"), 1, graph.MaxHopsLimit)
			setDefault(prop(s, "max_hops"), 1)
			setDefault(prop(s, "include_entities"), true)
			maxLen(prop(s, "at"), 64)
			types := prop(s, "relationship_types")
			maxItems := 32
			types.MaxItems = &maxItems
			maxLen(types.Items, 64)
		},
	}, func(ctx context.Context, call *Call, in RelatedIn) (RelatedOut, error) {
		at, err := optionalTime("at", in.At)
		if err != nil {
			return RelatedOut{}, err
		}
		q := knowledge.RelatedQuery{EntityID: in.EntityID, Types: in.RelationshipTypes, Direction: graph.Direction(deref(in.Direction)), At: at}
		if in.MaxHops != nil {
			q.MaxHops = *in.MaxHops
		}
		res, err := d.Knowledge.RelatedEntities(ctx, call.Caller(), q)
		if err != nil {
			return RelatedOut{}, err
		}
		return relatedOut(res, in.IncludeEntities == nil || *in.IncludeEntities), nil
	})
}

func relatedOut(res knowledge.Related, withSnapshots bool) RelatedOut {
	out := RelatedOut{
		Entities: []RelatedEntityOut{}, HopsTraversed: res.HopsTraversed, Truncated: res.Truncated,
		Relationships: mapSlice(res.Relationships, func(e graph.Edge) RelationshipOut { return relationshipOut(e.Relationship) }),
	}
	for _, r := range res.Reached {
		e := res.Entities[r.EntityID]
		item := RelatedEntityOut{ID: r.EntityID, EntityType: r.EntityType, CanonicalName: e.CanonicalName, Hops: r.Hops,
			Path: r.Path, RelationshipIDs: r.RelationshipIDs}
		if withSnapshots {
			item.Snapshot = orEmpty(e.Snapshot)
		}
		out.Entities = append(out.Entities, item)
	}
	out.TotalEntities, out.TotalRelationships = len(out.Entities), len(out.Relationships)
	return out
}

// --- retrieve_graph_neighborhood ---

// NeighborhoodIn are the arguments of retrieve_graph_neighborhood.
type NeighborhoodIn struct {
	NodeID               string  `json:"node_id" jsonschema:"an entity or source id"`
	NodeType             *string `json:"node_type,omitempty"`
	IncludeRelationships *bool   `json:"include_relationships,omitempty"`
	IncludeSources       *bool   `json:"include_sources,omitempty"`
	IncludeEvents        *bool   `json:"include_events,omitempty"`
	IncludeObservations  *bool   `json:"include_observations,omitempty"`
}

// NeighborhoodOut is the graph context of a node.
type NeighborhoodOut struct {
	NodeID          string             `json:"node_id"`
	NodeType        string             `json:"node_type"`
	Entity          *EntityOut         `json:"entity,omitempty"`
	EntitySnapshot  map[string]any     `json:"entity_snapshot,omitempty"`
	SourceMaterial  *SourceOut         `json:"source_material,omitempty"`
	Relationships   []RelationshipOut  `json:"relationships,omitempty"`
	RelatedEntities []EntityOut        `json:"related_entities"`
	RelatedSources  []SourceOut        `json:"related_sources,omitempty"`
	TimelineEvents  []TimelineEventOut `json:"timeline_events,omitempty"`
	Observations    []ObservationOut   `json:"observations,omitempty"`
}

func retrieveGraphNeighborhoodTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retrieve_graph_neighborhood",
		title: "Retrieve graph neighbourhood",
		description: "Everything around an entity (relationships, the entities at their other ends, its facts' sources, " +
			"timeline events, optionally observations) or a source (the entities it produced).",
		toolset: ToolsetRelationships, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceGraph),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "node_id"), idLimit)
			enum(prop(s, "node_type"), "entity", "source")
			setDefault(prop(s, "node_type"), "entity")
			for _, name := range []string{"include_relationships", "include_sources", "include_events"} {
				setDefault(prop(s, name), true)
			}
			setDefault(prop(s, "include_observations"), false)
		},
	}, func(ctx context.Context, call *Call, in NeighborhoodIn) (NeighborhoodOut, error) {
		nodeType := deref(in.NodeType)
		if nodeType == "" {
			nodeType = "entity"
		}
		// Source material is behind its own consent: a source node needs it,
		// and an entity's sources are left out without it.
		mayReadSources := call.May(consent.Read, consent.ResourceSources)
		if nodeType == "source" && !mayReadSources {
			return NeighborhoodOut{}, call.Require(consent.Read, consent.ResourceSources)
		}
		n, err := d.Knowledge.Neighborhood(ctx, call.Caller(), knowledge.NeighborhoodQuery{
			NodeID: in.NodeID, NodeType: nodeType, IncludeObservations: in.IncludeObservations != nil && *in.IncludeObservations,
		})
		if err != nil {
			return NeighborhoodOut{}, err
		}
		on := func(b *bool) bool { return b == nil || *b }
		related, err := entityOuts(ctx, d, call, n.RelatedEntities)
		if err != nil {
			return NeighborhoodOut{}, err
		}
		out := NeighborhoodOut{NodeID: in.NodeID, NodeType: nodeType, RelatedEntities: related}
		if n.Entity != nil {
			e := entityOut(*n.Entity, false)
			out.Entity, out.EntitySnapshot = &e, orEmpty(n.Entity.Snapshot)
		}
		if n.Source != nil {
			s := sourceOut(*n.Source)
			out.SourceMaterial = &s
		}
		if on(in.IncludeRelationships) {
			out.Relationships = mapSlice(n.Relationships, relationshipOut)
		}
		if on(in.IncludeSources) && mayReadSources {
			out.RelatedSources = mapSlice(n.Sources, sourceOut)
		}
		if on(in.IncludeEvents) {
			out.TimelineEvents = mapSlice(n.Events, timelineEventOut)
		}
		out.Observations = mapSlice(n.Observations, observationOut)
		return out, nil
	})
}

// --- query_graph (Epitome) ---

// QueryGraphIn are the arguments of query_graph.
type QueryGraphIn struct {
	QueryType string     `json:"queryType"`
	EntityID  *string    `json:"entityId,omitempty" jsonschema:"traverse: the start"`
	Relation  *string    `json:"relation,omitempty" jsonschema:"traverse: only this relationship type"`
	MaxHops   *int       `json:"maxHops,omitempty"`
	Pattern   *PatternIn `json:"pattern,omitempty" jsonschema:"pattern: criteria that must all hold"`
}

// PatternIn are query_graph's pattern criteria; all given ones must hold.
type PatternIn struct {
	EntityType       *string `json:"entity_type,omitempty"`
	Field            *string `json:"field,omitempty" jsonschema:"a snapshot field"`
	Equals           any     `json:"equals,omitempty" jsonschema:"the field's value (text: any case)"`
	Contains         *string `json:"contains,omitempty" jsonschema:"text the field contains (any case)"`
	RelationshipType *string `json:"relationship_type,omitempty" jsonschema:"has a relationship of this type"`
	NeighborType     *string `json:"neighbor_type,omitempty" jsonschema:"to or from an entity of this type"`
	Direction        *string `json:"direction,omitempty" jsonschema:"of that relationship"`
	Limit            *int    `json:"limit,omitempty"`
}

// QueryGraphOut is what query_graph found: entities and the edges between
// or to them.
type QueryGraphOut struct {
	QueryType string            `json:"queryType"`
	Entities  []EntityOut       `json:"entities"`
	Edges     []RelationshipOut `json:"edges"`
	Truncated bool              `json:"truncated"`
}

// Epitome bounds traversals of query_graph to three hops.
const queryGraphMaxHops = 3

func queryGraphTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "query_graph",
		title: "Query the knowledge graph",
		description: "Query the graph. traverse: the entities within maxHops of entityId, optionally along one relation. " +
			"pattern: entities by type, by a snapshot field equal to or containing a value, or by a relationship to a neighbour " +
			"of a type. Both return entities and edges.",
		toolset: ToolsetRelationships, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceGraph),
		shape: func(s *jsonschema.Schema) {
			enum(prop(s, "queryType"), "traverse", "pattern")
			maxLen(prop(s, "entityId"), idLimit)
			maxLen(prop(s, "relation"), 64)
			bounds(prop(s, "maxHops"), 1, queryGraphMaxHops)
			setDefault(prop(s, "maxHops"), 2)
			p := prop(s, "pattern")
			directionShape(prop(p, "direction"))
			bounds(prop(p, "limit"), 1, maxLimit)
			for _, name := range []string{"entity_type", "field", "relationship_type", "neighbor_type"} {
				maxLen(prop(p, name), 128)
			}
			maxLen(prop(p, "contains"), 1024)
		},
	}, func(ctx context.Context, call *Call, in QueryGraphIn) (QueryGraphOut, error) {
		out := QueryGraphOut{QueryType: in.QueryType, Entities: []EntityOut{}, Edges: []RelationshipOut{}}
		switch in.QueryType {
		case "traverse":
			if in.EntityID == nil {
				return out, &knowledge.ValidationError{Field: "entityId", Expected: "string", Got: "missing", Message: "is required for a traverse query"}
			}
			q := knowledge.RelatedQuery{EntityID: *in.EntityID, MaxHops: 2}
			if in.MaxHops != nil {
				q.MaxHops = *in.MaxHops
			}
			if in.Relation != nil && *in.Relation != "" {
				q.Types = []string{*in.Relation}
			}
			res, err := d.Knowledge.RelatedEntities(ctx, call.Caller(), q)
			if err != nil {
				return out, err
			}
			shown := []graph.Entity{res.Start}
			for _, r := range res.Reached {
				shown = append(shown, res.Entities[r.EntityID])
			}
			if out.Entities, err = entityOuts(ctx, d, call, shown); err != nil {
				return out, err
			}
			out.Edges = mapSlice(res.Relationships, func(e graph.Edge) RelationshipOut { return relationshipOut(e.Relationship) })
			out.Truncated = res.Truncated
		case "pattern":
			if in.Pattern == nil {
				return out, &knowledge.ValidationError{Field: "pattern", Expected: "object", Got: "missing", Message: "is required for a pattern query"}
			}
			p := in.Pattern
			matches, truncated, err := d.Knowledge.MatchPattern(ctx, call.Caller(), knowledge.Pattern{
				EntityType: deref(p.EntityType), Field: deref(p.Field), Equals: p.Equals, Contains: deref(p.Contains),
				RelationshipType: deref(p.RelationshipType), NeighborType: deref(p.NeighborType),
				Direction: graph.Direction(deref(p.Direction)), Limit: deref(p.Limit),
			})
			if err != nil {
				return out, err
			}
			out.Truncated = truncated
			var seen []string
			if out.Entities, err = entityOuts(ctx, d, call, mapSlice(matches, func(m knowledge.PatternMatch) graph.Entity { return m.Entity })); err != nil {
				return out, err
			}
			for _, m := range matches {
				for _, e := range m.Edges {
					if !slices.Contains(seen, e.ID) {
						seen = append(seen, e.ID)
						out.Edges = append(out.Edges, relationshipOut(e.Relationship))
					}
				}
			}
		}
		return out, nil
	})
}
