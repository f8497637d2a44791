-- Compact storage: the audit log without repeated strings, and its
-- retention path. (Entity embeddings: 012_entity_embeddings_int8.sql.)
--
-- The audit log. Every row of 004's audit_log repeated a dozen strings (user,
-- agent, key, transport, tool, kind, action, resource, decision, result
-- code) and the request id as text: about 240 bytes a row. A row now holds
-- small integers that name those strings in two dictionaries, which only
-- ever grow (triggers refuse UPDATE and DELETE on them too):
--
--   audit_strings  one row per distinct string (tool, kind, action,
--                  resource, decision, result code, user id);
--   audit_callers  one row per distinct (user, agent id, agent name, key,
--                  transport): who called, and how.
--
-- user_ref repeats the caller's user (as its audit_strings id) so that a
-- user's log is one index range, newest first. request holds a request id
-- of Cairn's form (trace_ and 16 lowercase hex digits) as its 8 bytes, a
-- BLOB; any other request id as its TEXT. Timestamps and latency stay
-- integers (Unix microseconds, microseconds). Ids are kept: the rows of the
-- old table are copied with their ids, and AUTOINCREMENT never gives an id
-- twice, even after retention deleted the newest rows.

CREATE TABLE audit_strings (
    id    INTEGER PRIMARY KEY,
    value TEXT NOT NULL UNIQUE
);

CREATE TABLE audit_callers (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    transport  TEXT NOT NULL,
    UNIQUE (user_id, agent_id, agent_name, key_id, transport)
);

ALTER TABLE audit_log RENAME TO audit_log_004;

CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    user_ref   INTEGER NOT NULL,
    caller     INTEGER NOT NULL,
    tool       INTEGER NOT NULL,
    kind       INTEGER NOT NULL,
    action     INTEGER NOT NULL,
    resource   INTEGER NOT NULL,
    decision   INTEGER NOT NULL,
    result     INTEGER NOT NULL,
    latency_us INTEGER NOT NULL,
    request    BLOB NOT NULL
);

INSERT INTO audit_strings (value)
    SELECT user_id FROM audit_log_004 UNION SELECT tool FROM audit_log_004 UNION SELECT kind FROM audit_log_004
    UNION SELECT action FROM audit_log_004 UNION SELECT resource FROM audit_log_004
    UNION SELECT decision FROM audit_log_004 UNION SELECT result_code FROM audit_log_004
    ORDER BY 1;

INSERT INTO audit_callers (user_id, agent_id, agent_name, key_id, transport)
    SELECT DISTINCT user_id, agent_id, agent_name, key_id, transport FROM audit_log_004 ORDER BY 1, 2, 3, 4, 5;

INSERT INTO audit_log (id, at, user_ref, caller, tool, kind, action, resource, decision, result, latency_us, request)
    SELECT o.id, o.at,
        (SELECT id FROM audit_strings WHERE value = o.user_id),
        (SELECT id FROM audit_callers c WHERE c.user_id = o.user_id AND c.agent_id = o.agent_id
            AND c.agent_name = o.agent_name AND c.key_id = o.key_id AND c.transport = o.transport),
        (SELECT id FROM audit_strings WHERE value = o.tool),
        (SELECT id FROM audit_strings WHERE value = o.kind),
        (SELECT id FROM audit_strings WHERE value = o.action),
        (SELECT id FROM audit_strings WHERE value = o.resource),
        (SELECT id FROM audit_strings WHERE value = o.decision),
        (SELECT id FROM audit_strings WHERE value = o.result_code),
        o.latency_us,
        CASE WHEN length(o.request_id) = 22
                AND o.request_id GLOB 'trace_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'
            THEN unhex(substr(o.request_id, 7))
            ELSE o.request_id END
    FROM audit_log_004 o ORDER BY o.id;

-- Dropping the old table drops its triggers and its index with it.
DROP TABLE audit_log_004;

CREATE INDEX audit_log_user ON audit_log (user_ref);

-- Retention (controlplane.Store.PurgeAudit) is the one path that deletes
-- audit records: in one transaction it writes the control row, deleting
-- only records older than its cutoff, then removes the row. Any other
-- DELETE, and every UPDATE, is refused.
CREATE TABLE audit_purge (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    before INTEGER NOT NULL
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    WHEN NOT EXISTS (SELECT 1 FROM audit_purge WHERE id = 1 AND OLD.at < before)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: only retention deletes records, those older than its cutoff');
END;

CREATE TRIGGER audit_strings_no_update BEFORE UPDATE ON audit_strings
BEGIN
    SELECT RAISE(ABORT, 'audit_strings is append-only');
END;

CREATE TRIGGER audit_strings_no_delete BEFORE DELETE ON audit_strings
BEGIN
    SELECT RAISE(ABORT, 'audit_strings is append-only');
END;

CREATE TRIGGER audit_callers_no_update BEFORE UPDATE ON audit_callers
BEGIN
    SELECT RAISE(ABORT, 'audit_callers is append-only');
END;

CREATE TRIGGER audit_callers_no_delete BEFORE DELETE ON audit_callers
BEGIN
    SELECT RAISE(ABORT, 'audit_callers is append-only');
END;
