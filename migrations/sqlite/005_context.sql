-- Context loading: the per-user profile with its history of changes, and the
-- contradictions found between observations, with the observations a
-- resolution rejected. Timestamps are Unix microseconds; JSON is stored as
-- text, so that the same SQL runs on SQLite and PostgreSQL.

-- One profile document (a JSON object) per user. version counts the changes.
CREATE TABLE profiles (
    user_id    TEXT PRIMARY KEY,
    data       TEXT NOT NULL,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Every change to a profile: the RFC 7396 merge patch, why, by which agent.
CREATE TABLE profile_changes (
    user_id    TEXT NOT NULL,
    version    BIGINT NOT NULL,
    patch      TEXT NOT NULL,
    reason     TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    changed_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, version)
);

-- A new observation whose value for a field disagrees with the entity's
-- current value, which came from another source. status is open or
-- resolved; resolution is confirm, reject or keep_both.
CREATE TABLE contradictions (
    id                     TEXT PRIMARY KEY,
    user_id                TEXT NOT NULL,
    entity_id              TEXT NOT NULL,
    entity_type            TEXT NOT NULL,
    field                  TEXT NOT NULL,
    current_value          TEXT NOT NULL,
    current_observation_id TEXT NOT NULL,
    current_source_id      TEXT NOT NULL,
    new_value              TEXT NOT NULL,
    new_observation_id     TEXT NOT NULL,
    new_source_id          TEXT NOT NULL,
    detected_at            BIGINT NOT NULL,
    status                 TEXT NOT NULL,
    resolution             TEXT NOT NULL DEFAULT '',
    resolved_at            BIGINT,
    resolved_by            TEXT NOT NULL DEFAULT '',
    correction_id          TEXT NOT NULL DEFAULT ''
);

CREATE INDEX contradictions_open ON contradictions (user_id, status, detected_at);
CREATE INDEX contradictions_entity ON contradictions (user_id, entity_id);

-- Observations that a "reject" resolution took out of the reducer. The
-- observation itself stays (provenance still shows it); the reducer skips it.
CREATE TABLE rejected_observations (
    user_id          TEXT NOT NULL,
    observation_id   TEXT NOT NULL,
    entity_id        TEXT NOT NULL,
    contradiction_id TEXT NOT NULL,
    rejected_at      BIGINT NOT NULL,
    PRIMARY KEY (user_id, observation_id)
);

CREATE INDEX rejected_observations_entity ON rejected_observations (user_id, entity_id);
