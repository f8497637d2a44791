-- Graph data of the embedded store: sources, observations, entities with their
-- reduced snapshots, raw fragments, identifiers, timeline events and relationships.
-- Every row carries user_id and every query filters on it. Times are Unix
-- microseconds.

CREATE TABLE sources (
    id                TEXT PRIMARY KEY,
    user_id           TEXT NOT NULL,
    content_hash      TEXT NOT NULL,
    kind              TEXT NOT NULL,
    mime_type         TEXT NOT NULL,
    original_filename TEXT NOT NULL DEFAULT '',
    size              INTEGER NOT NULL,
    provenance        TEXT NOT NULL DEFAULT '{}',
    created_at        INTEGER NOT NULL,
    UNIQUE (user_id, content_hash)
);

CREATE TABLE entities (
    id                  TEXT PRIMARY KEY,
    user_id             TEXT NOT NULL,
    entity_type         TEXT NOT NULL,
    canonical_name      TEXT NOT NULL,
    schema_version      TEXT NOT NULL,
    snapshot            TEXT NOT NULL,
    provenance          TEXT NOT NULL,
    observation_count   INTEGER NOT NULL,
    last_observation_at INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    computed_at         INTEGER NOT NULL,
    merged_into         TEXT,
    merged_at           INTEGER
);

CREATE INDEX entities_user_recent ON entities (user_id, last_observation_at DESC, id);
CREATE INDEX entities_user_type ON entities (user_id, entity_type, last_observation_at DESC, id);

CREATE TABLE observations (
    id                 TEXT PRIMARY KEY,
    user_id            TEXT NOT NULL,
    entity_id          TEXT NOT NULL,
    entity_type        TEXT NOT NULL,
    schema_version     TEXT NOT NULL,
    source_id          TEXT NOT NULL REFERENCES sources (id),
    observed_at        INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    specificity_score  REAL NOT NULL,
    source_priority    INTEGER NOT NULL,
    fields             TEXT NOT NULL,
    original_entity_id TEXT NOT NULL
);

CREATE INDEX observations_entity ON observations (user_id, entity_id, observed_at DESC, id);
CREATE INDEX observations_source ON observations (user_id, source_id);

CREATE TABLE raw_fragments (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    source_id   TEXT NOT NULL REFERENCES sources (id),
    entity_id   TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    field       TEXT NOT NULL,
    value       TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE INDEX raw_fragments_type ON raw_fragments (user_id, entity_type, field);

CREATE TABLE entity_identifiers (
    user_id   TEXT NOT NULL,
    value     TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    field     TEXT NOT NULL,
    PRIMARY KEY (user_id, value, entity_id, field)
);

CREATE INDEX entity_identifiers_entity ON entity_identifiers (entity_id);

CREATE TABLE timeline_events (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL,
    entity_id       TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    event_timestamp TEXT NOT NULL,
    event_time      INTEGER NOT NULL,
    source_id       TEXT NOT NULL,
    properties      TEXT NOT NULL
);

CREATE INDEX timeline_events_user_time ON timeline_events (user_id, event_time DESC, id);
CREATE INDEX timeline_events_entity ON timeline_events (entity_id);
CREATE INDEX timeline_events_source ON timeline_events (user_id, source_id);

-- A relationship's deterministic id may have several rows: one per period of
-- existence (created, ended by a delete or a merge, created again), so that
-- as-of reads see the graph as it was. A live edge has ended_at NULL.
CREATE TABLE relationships (
    id                  TEXT NOT NULL,
    user_id             TEXT NOT NULL,
    relationship_type   TEXT NOT NULL,
    source_entity_id    TEXT NOT NULL,
    target_entity_id    TEXT NOT NULL,
    -- The endpoints' entity types, copied from entities when the row is
    -- written (an entity's type never changes: it is part of its id), so
    -- that a traversal filters on them without reading the entities.
    source_type         TEXT NOT NULL,
    target_type         TEXT NOT NULL,
    metadata            TEXT NOT NULL,
    provenance          TEXT NOT NULL,
    observation_count   INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    last_observation_at INTEGER NOT NULL,
    ended_at            INTEGER,
    PRIMARY KEY (id, created_at)
);

CREATE INDEX relationships_out ON relationships (user_id, source_entity_id, relationship_type);
CREATE INDEX relationships_in ON relationships (user_id, target_entity_id, relationship_type);
CREATE INDEX relationships_recent ON relationships (user_id, created_at DESC, id);

CREATE TABLE relationship_observations (
    id                TEXT PRIMARY KEY,
    user_id           TEXT NOT NULL,
    relationship_id   TEXT NOT NULL,
    source_id         TEXT NOT NULL REFERENCES sources (id),
    observed_at       INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    specificity_score REAL NOT NULL,
    source_priority   INTEGER NOT NULL,
    metadata          TEXT NOT NULL
);

CREATE INDEX relationship_observations_rel ON relationship_observations (user_id, relationship_id, observed_at DESC, id);
