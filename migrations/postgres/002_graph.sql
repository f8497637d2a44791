-- Graph data on PostgreSQL, for deployments that run on PostgreSQL alone:
-- sources, observations, entities with their reduced snapshots, raw fragments,
-- identifiers, timeline events and relationships (graph/postgres).
--
-- Ids and every text column a listing orders by use COLLATE "C", so that rows
-- come back in byte order, as on SQLite and in Go's string comparison; the
-- conformance suite checks that order. Every row carries user_id and every
-- query filters on it. Times are TIMESTAMPTZ (microseconds, like graph.Now);
-- maps are JSONB.

CREATE TABLE sources (
    id                TEXT COLLATE "C" PRIMARY KEY,
    user_id           TEXT COLLATE "C" NOT NULL,
    content_hash      TEXT COLLATE "C" NOT NULL,
    kind              TEXT NOT NULL,
    mime_type         TEXT NOT NULL,
    original_filename TEXT NOT NULL DEFAULT '',
    size              BIGINT NOT NULL,
    provenance        JSONB NOT NULL DEFAULT '{}',
    created_at        TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, content_hash)
);

CREATE TABLE entities (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    user_id             TEXT COLLATE "C" NOT NULL,
    entity_type         TEXT COLLATE "C" NOT NULL,
    canonical_name      TEXT NOT NULL,
    schema_version      TEXT NOT NULL,
    snapshot            JSONB NOT NULL,
    provenance          JSONB NOT NULL,
    observation_count   INTEGER NOT NULL,
    last_observation_at TIMESTAMPTZ NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    computed_at         TIMESTAMPTZ NOT NULL,
    merged_into         TEXT COLLATE "C",
    merged_at           TIMESTAMPTZ
);

CREATE INDEX entities_user_recent ON entities (user_id, last_observation_at DESC, id);
CREATE INDEX entities_user_type ON entities (user_id, entity_type, last_observation_at DESC, id);

CREATE TABLE observations (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    user_id            TEXT COLLATE "C" NOT NULL,
    entity_id          TEXT COLLATE "C" NOT NULL,
    entity_type        TEXT COLLATE "C" NOT NULL,
    schema_version     TEXT NOT NULL,
    source_id          TEXT COLLATE "C" NOT NULL REFERENCES sources (id),
    observed_at        TIMESTAMPTZ NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    specificity_score  DOUBLE PRECISION NOT NULL,
    source_priority    INTEGER NOT NULL,
    fields             JSONB NOT NULL,
    original_entity_id TEXT COLLATE "C" NOT NULL
);

CREATE INDEX observations_entity ON observations (user_id, entity_id, observed_at DESC, id);
CREATE INDEX observations_source ON observations (user_id, source_id, id);

CREATE TABLE raw_fragments (
    id          TEXT COLLATE "C" PRIMARY KEY,
    user_id     TEXT COLLATE "C" NOT NULL,
    source_id   TEXT COLLATE "C" NOT NULL REFERENCES sources (id),
    entity_id   TEXT COLLATE "C" NOT NULL,
    entity_type TEXT COLLATE "C" NOT NULL,
    field       TEXT COLLATE "C" NOT NULL,
    value       JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX raw_fragments_type ON raw_fragments (user_id, entity_type, field);

CREATE TABLE entity_identifiers (
    user_id   TEXT COLLATE "C" NOT NULL,
    value     TEXT COLLATE "C" NOT NULL,
    entity_id TEXT COLLATE "C" NOT NULL,
    field     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, value, entity_id, field)
);

CREATE INDEX entity_identifiers_entity ON entity_identifiers (user_id, entity_id);

CREATE TABLE timeline_events (
    id              TEXT COLLATE "C" PRIMARY KEY,
    user_id         TEXT COLLATE "C" NOT NULL,
    entity_id       TEXT COLLATE "C" NOT NULL,
    event_type      TEXT COLLATE "C" NOT NULL,
    event_timestamp TEXT NOT NULL,
    event_time      TIMESTAMPTZ NOT NULL,
    source_id       TEXT COLLATE "C" NOT NULL,
    properties      JSONB NOT NULL
);

CREATE INDEX timeline_events_user_time ON timeline_events (user_id, event_time DESC, id);
CREATE INDEX timeline_events_entity ON timeline_events (user_id, entity_id);
CREATE INDEX timeline_events_source ON timeline_events (user_id, source_id);

-- A relationship's deterministic id may have several rows: one per period of
-- existence (created, ended by a delete or a merge, created again), so that
-- as-of reads see the graph as it was. A live edge has ended_at NULL.
CREATE TABLE relationships (
    id                  TEXT COLLATE "C" NOT NULL,
    user_id             TEXT COLLATE "C" NOT NULL,
    relationship_type   TEXT COLLATE "C" NOT NULL,
    source_entity_id    TEXT COLLATE "C" NOT NULL,
    target_entity_id    TEXT COLLATE "C" NOT NULL,
    -- The endpoints' entity types, copied from entities when the row is
    -- written (an entity's type never changes: it is part of its id), so
    -- that a traversal filters on them without reading the entities.
    source_type         TEXT COLLATE "C" NOT NULL,
    target_type         TEXT COLLATE "C" NOT NULL,
    metadata            JSONB NOT NULL,
    provenance          JSONB NOT NULL,
    observation_count   INTEGER NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    last_observation_at TIMESTAMPTZ NOT NULL,
    ended_at            TIMESTAMPTZ,
    PRIMARY KEY (id, created_at)
);

CREATE INDEX relationships_out ON relationships (user_id, source_entity_id, relationship_type);
CREATE INDEX relationships_in ON relationships (user_id, target_entity_id, relationship_type);
CREATE INDEX relationships_recent ON relationships (user_id, created_at DESC, id);

CREATE TABLE relationship_observations (
    id                TEXT COLLATE "C" PRIMARY KEY,
    user_id           TEXT COLLATE "C" NOT NULL,
    relationship_id   TEXT COLLATE "C" NOT NULL,
    source_id         TEXT COLLATE "C" NOT NULL REFERENCES sources (id),
    observed_at       TIMESTAMPTZ NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    specificity_score DOUBLE PRECISION NOT NULL,
    source_priority   INTEGER NOT NULL,
    metadata          JSONB NOT NULL
);

CREATE INDEX relationship_observations_rel ON relationship_observations (user_id, relationship_id, observed_at DESC, id);
