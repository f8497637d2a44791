-- Compact storage: the audit log without repeated strings, and its
-- retention path. (Entity embeddings: 012_entity_embeddings_int8.sql.)
--
-- The audit log. Every row of 004's audit_log repeated a dozen strings (user,
-- agent, key, transport, tool, kind, action, resource, decision, result
-- code) and the request id as text. A row now holds small integers that
-- name those strings in two dictionaries, which only ever grow (triggers
-- refuse UPDATE, DELETE and TRUNCATE on them too):
--
--   audit_strings  one row per distinct string (tool, kind, action,
--                  resource, decision, result code, user id);
--   audit_callers  one row per distinct (user, agent id, agent name, key,
--                  transport): who called, and how.
--
-- user_ref repeats the caller's user (as its audit_strings id) so that a
-- user's log is one index range, newest first. request holds the request
-- id: a 0 byte and the 8 bytes of an id of Cairn's form (trace_ and 16
-- lowercase hex digits), or a 1 byte and the UTF-8 of any other id.
-- Timestamps and latency stay integers (Unix microseconds, microseconds).
-- Ids are kept: the rows of the old table are copied with their ids and the
-- identity continues after the highest.

CREATE TABLE audit_strings (
    id    INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    value TEXT NOT NULL UNIQUE
);

CREATE TABLE audit_callers (
    id         INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    transport  TEXT NOT NULL,
    UNIQUE (user_id, agent_id, agent_name, key_id, transport)
);

ALTER TABLE audit_log RENAME TO audit_log_004;
ALTER INDEX audit_log_user_at RENAME TO audit_log_004_user_at;

-- Columns in order of alignment: no padding inside a row.
CREATE TABLE audit_log (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         BIGINT NOT NULL,
    latency_us BIGINT NOT NULL,
    user_ref   INTEGER NOT NULL,
    caller     INTEGER NOT NULL,
    tool       INTEGER NOT NULL,
    resource   INTEGER NOT NULL,
    result     INTEGER NOT NULL,
    kind       INTEGER NOT NULL,
    action     INTEGER NOT NULL,
    decision   INTEGER NOT NULL,
    request    BYTEA NOT NULL
);

INSERT INTO audit_strings (value)
    SELECT v FROM (
        SELECT user_id FROM audit_log_004 UNION SELECT tool FROM audit_log_004 UNION SELECT kind FROM audit_log_004
        UNION SELECT action FROM audit_log_004 UNION SELECT resource FROM audit_log_004
        UNION SELECT decision FROM audit_log_004 UNION SELECT result_code FROM audit_log_004
    ) s (v) ORDER BY v COLLATE "C";

INSERT INTO audit_callers (user_id, agent_id, agent_name, key_id, transport)
    SELECT DISTINCT user_id, agent_id, agent_name, key_id, transport FROM audit_log_004;

INSERT INTO audit_log (id, at, latency_us, user_ref, caller, tool, resource, result, kind, action, decision, request)
    OVERRIDING SYSTEM VALUE
    SELECT o.id, o.at, o.latency_us, u.id, c.id, t.id, r.id, rc.id, k.id, a.id, d.id,
        CASE WHEN o.request_id ~ '^trace_[0-9a-f]{16}$'
            THEN '\x00'::bytea || decode(substr(o.request_id, 7), 'hex')
            ELSE '\x01'::bytea || convert_to(o.request_id, 'UTF8') END
    FROM audit_log_004 o
    JOIN audit_strings u ON u.value = o.user_id
    JOIN audit_callers c ON (c.user_id, c.agent_id, c.agent_name, c.key_id, c.transport)
        = (o.user_id, o.agent_id, o.agent_name, o.key_id, o.transport)
    JOIN audit_strings t ON t.value = o.tool
    JOIN audit_strings r ON r.value = o.resource
    JOIN audit_strings rc ON rc.value = o.result_code
    JOIN audit_strings k ON k.value = o.kind
    JOIN audit_strings a ON a.value = o.action
    JOIN audit_strings d ON d.value = o.decision
    ORDER BY o.id;

SELECT setval(pg_get_serial_sequence('audit_log', 'id'), coalesce((SELECT max(id) FROM audit_log_004), 0) + 1, false);

-- Dropping the old table drops its triggers, index and sequence with it.
DROP TABLE audit_log_004;

CREATE INDEX audit_log_user ON audit_log (user_ref, id);

-- Retention (controlplane.Store.PurgeAudit) is the one path that deletes
-- audit records: in one transaction it sets cairn.audit_purge_before (SET
-- LOCAL, so it ends with the transaction) to its cutoff, and deletes only
-- records older than that. Any other DELETE, every UPDATE and TRUNCATE are
-- refused.
CREATE FUNCTION audit_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND OLD.at < coalesce(nullif(current_setting('cairn.audit_purge_before', true), '')::bigint,
            -9223372036854775808) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only: only retention deletes records, those older than its cutoff';
END;
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_strings_append_only BEFORE UPDATE OR DELETE ON audit_strings
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_strings_no_truncate BEFORE TRUNCATE ON audit_strings
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_callers_append_only BEFORE UPDATE OR DELETE ON audit_callers
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_callers_no_truncate BEFORE TRUNCATE ON audit_callers
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
