// Uniqueness of Cairn's nodes. Ids are hashes that already include the user
// (knowledge/ids.go), so they are unique across users, as the primary keys
// of the SQL backends are; what is unique per user is unique on
// (user_id, …). Each constraint is backed by an index, which serves the
// lookups by id that every statement makes, and makes MERGE on these keys
// safe under concurrent writers.
// Statements are separated by a semicolon at the end of a line; each runs
// in a transaction of its own (Neo4j does not mix schema commands with
// other writes), and IF NOT EXISTS makes each safe to run again.
CREATE CONSTRAINT entity_id IF NOT EXISTS
FOR (e:Entity) REQUIRE e.id IS UNIQUE;

CREATE CONSTRAINT source_id IF NOT EXISTS
FOR (s:Source) REQUIRE s.id IS UNIQUE;

CREATE CONSTRAINT source_content_hash IF NOT EXISTS
FOR (s:Source) REQUIRE (s.user_id, s.content_hash) IS UNIQUE;

CREATE CONSTRAINT observation_id IF NOT EXISTS
FOR (o:Observation) REQUIRE o.id IS UNIQUE;

CREATE CONSTRAINT raw_fragment_id IF NOT EXISTS
FOR (f:RawFragment) REQUIRE f.id IS UNIQUE;

CREATE CONSTRAINT relationship_observation_id IF NOT EXISTS
FOR (o:RelationshipObservation) REQUIRE o.id IS UNIQUE;

CREATE CONSTRAINT timeline_event_id IF NOT EXISTS
FOR (ev:TimelineEvent) REQUIRE ev.id IS UNIQUE;

CREATE CONSTRAINT identifier_value IF NOT EXISTS
FOR (i:Identifier) REQUIRE (i.user_id, i.value) IS UNIQUE;

CREATE CONSTRAINT outbox_entry IF NOT EXISTS
FOR (o:OutboxEntry) REQUIRE (o.user_id, o.entity_id) IS UNIQUE;

CREATE CONSTRAINT user_lock IF NOT EXISTS
FOR (l:UserLock) REQUIRE l.user_id IS UNIQUE;
