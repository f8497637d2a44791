-- Control plane: users, their agents and the API keys that authenticate them.
-- Timestamps are Unix microseconds (INTEGER) so that the same SQL runs on SQLite
-- and PostgreSQL (see controlplane/doc.go).

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    is_owner   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL
);

CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    agent_id     TEXT NOT NULL REFERENCES agents(id),
    key_hash     TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    last_used_at BIGINT
);

CREATE INDEX api_keys_user_agent ON api_keys (user_id, agent_id);
