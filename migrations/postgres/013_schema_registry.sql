-- The schema registry (knowledge.SchemaStore): every version of every
-- schema, global (owner_id '') or a user's own, immutable once stored; at
-- most one version of an (owner, type) is active, which the partial unique
-- index enforces, so that activation (one UPDATE off, one on, in one
-- transaction) is atomic. definition is the schema as JSON. Timestamps are
-- Unix microseconds, as in 001_control_plane.sql.
CREATE TABLE schema_versions (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    version     TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    definition  TEXT NOT NULL,
    active      INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at  BIGINT NOT NULL,
    created_by  TEXT NOT NULL,
    UNIQUE (owner_id, entity_type, version),
    UNIQUE (owner_id, entity_type, seq)
);

CREATE UNIQUE INDEX schema_versions_active ON schema_versions (owner_id, entity_type) WHERE active = 1;

-- Recommendations to add fields to a user's schema of a type, with their
-- status (pending, approved, rejected, applied, auto_applied); fields is a
-- JSON array of {field_name, field_type, required}.
CREATE TABLE schema_recommendations (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    fields      TEXT NOT NULL,
    source      TEXT NOT NULL,
    confidence  DOUBLE PRECISION NOT NULL,
    reasoning   TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE INDEX schema_recommendations_type ON schema_recommendations (user_id, entity_type);

-- Per-user schema settings: auto-enhancement is on unless a row says off.
CREATE TABLE schema_settings (
    user_id      TEXT PRIMARY KEY,
    auto_enhance INTEGER NOT NULL CHECK (auto_enhance IN (0, 1)),
    updated_at   BIGINT NOT NULL
);
