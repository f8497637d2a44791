-- Erasing all of a user's data (cairn admin erase --user, issue 37, see
-- docs/forgetting.md): one row per erasure, the job that makes a run that
-- stops resumable. phase is the first step not yet done; counts (JSON) is
-- how many rows of each kind the steps done so far erased. The row
-- outlives the user record (deleted with the last step, in the same
-- transaction that marks the erasure done) and holds no content: ids,
-- times, the actor and the operator's reason.
CREATE TABLE user_erasures (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'done')),
    phase       TEXT NOT NULL,
    counts      TEXT NOT NULL DEFAULT '{}',
    actor       TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    started_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    finished_at BIGINT
);
-- At most one erasure of a user runs: a second run resumes it.
CREATE UNIQUE INDEX user_erasures_running ON user_erasures (user_id) WHERE status = 'running';
