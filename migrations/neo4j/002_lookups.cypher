// The lookups the statements in cypher/ make besides those by id: listings
// by user (newest first) and by type, an entity's observations, events and
// outbox order, and the id of each built-in relationship type (a type that a
// schema registers gets its index from cypher/relationship_index).
CREATE INDEX entity_user_recent IF NOT EXISTS
FOR (e:Entity) ON (e.user_id, e.last_observation_at);

CREATE INDEX entity_user_type IF NOT EXISTS
FOR (e:Entity) ON (e.user_id, e.entity_type);

CREATE INDEX observation_entity IF NOT EXISTS
FOR (o:Observation) ON (o.user_id, o.entity_id);

CREATE INDEX relationship_observation_rel IF NOT EXISTS
FOR (o:RelationshipObservation) ON (o.user_id, o.relationship_id);

CREATE INDEX timeline_event_user_time IF NOT EXISTS
FOR (ev:TimelineEvent) ON (ev.user_id, ev.time);

CREATE INDEX timeline_event_entity IF NOT EXISTS
FOR (ev:TimelineEvent) ON (ev.user_id, ev.entity_id);

CREATE INDEX outbox_ready IF NOT EXISTS
FOR (o:OutboxEntry) ON (o.enqueued_at);

CREATE INDEX rel_PART_OF_id IF NOT EXISTS
FOR ()-[r:PART_OF]-() ON (r.id, r.user_id);

CREATE INDEX rel_CORRECTS_id IF NOT EXISTS
FOR ()-[r:CORRECTS]-() ON (r.id, r.user_id);

CREATE INDEX rel_REFERS_TO_id IF NOT EXISTS
FOR ()-[r:REFERS_TO]-() ON (r.id, r.user_id);

CREATE INDEX rel_SETTLES_id IF NOT EXISTS
FOR ()-[r:SETTLES]-() ON (r.id, r.user_id);

CREATE INDEX rel_DUPLICATE_OF_id IF NOT EXISTS
FOR ()-[r:DUPLICATE_OF]-() ON (r.id, r.user_id);

CREATE INDEX rel_DEPENDS_ON_id IF NOT EXISTS
FOR ()-[r:DEPENDS_ON]-() ON (r.id, r.user_id);

CREATE INDEX rel_SUPERSEDES_id IF NOT EXISTS
FOR ()-[r:SUPERSEDES]-() ON (r.id, r.user_id);
