-- Consent: per-agent rules, the append-only audit log and rate-limit windows.
-- Timestamps are Unix microseconds (BIGINT), as in 001_control_plane.sql.

CREATE TABLE consent_rules (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    agent_id   TEXT NOT NULL REFERENCES agents(id),
    pattern    TEXT NOT NULL,
    action     TEXT NOT NULL CHECK (action IN ('read', 'write')),
    effect     TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, agent_id, pattern, action)
);

CREATE TABLE audit_log (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          BIGINT NOT NULL,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    agent_name  TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    transport   TEXT NOT NULL,
    tool        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    action      TEXT NOT NULL,
    resource    TEXT NOT NULL,
    decision    TEXT NOT NULL,
    result_code TEXT NOT NULL,
    latency_us  BIGINT NOT NULL,
    request_id  TEXT NOT NULL
);

CREATE INDEX audit_log_user_at ON audit_log (user_id, at);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TABLE rate_limits (
    key_id       TEXT NOT NULL,
    class        TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    PRIMARY KEY (key_id, class, window_start)
);
