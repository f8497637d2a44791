-- Files and interpretation jobs (issue 15). Timestamps are Unix
-- microseconds; JSON is stored as text, so that the same SQL runs on SQLite
-- and PostgreSQL.

-- One row per stored file, per user. id is the file's source id (the same
-- bytes stored twice by one user are one file). A row is written as
-- 'pending' before its blob, and becomes 'stored' once the blob and the
-- graph's source exist: a crash in between leaves a pending row that the
-- next start repairs (the blob is there) or removes (it is not).
CREATE TABLE cairn_files (
    user_id      TEXT NOT NULL,
    id           TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    blob_key     TEXT NOT NULL,
    size         BIGINT NOT NULL,
    mime_type    TEXT NOT NULL,
    filename     TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL,
    agent_id     TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX cairn_files_state ON cairn_files (state, created_at);

-- Durable jobs: interpretation of a file, leased by workers. status is
-- queued, running, succeeded, failed or cancelled. items_done is also the
-- checkpoint a resumed job continues from.
CREATE TABLE cairn_jobs (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    agent_id         TEXT NOT NULL DEFAULT '',
    agent_name       TEXT NOT NULL DEFAULT '',
    kind             TEXT NOT NULL,
    file_id          TEXT NOT NULL,
    status           TEXT NOT NULL,
    stage            TEXT NOT NULL DEFAULT '',
    percent          INTEGER NOT NULL DEFAULT 0,
    items_done       BIGINT NOT NULL DEFAULT 0,
    items_total      BIGINT NOT NULL DEFAULT 0,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 3,
    run_after        BIGINT NOT NULL,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      BIGINT NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    config           TEXT NOT NULL DEFAULT '{}',
    result           TEXT NOT NULL DEFAULT '{}',
    error_code       TEXT NOT NULL DEFAULT '',
    error_message    TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX cairn_jobs_ready ON cairn_jobs (status, run_after);
CREATE INDEX cairn_jobs_user ON cairn_jobs (user_id, created_at);
CREATE INDEX cairn_jobs_file ON cairn_jobs (user_id, file_id);

-- The key signed file URLs are made with: one row, created at first use
-- and shared by every process on the store.
CREATE TABLE cairn_signing_keys (
    id         TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
