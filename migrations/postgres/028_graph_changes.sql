-- The graph's change log (graph/changes.go): what each write transaction
-- changed, written in that transaction, so that every process on the same
-- database can tell its MCP resource subscribers (graph.Store.Changes).
-- Writers take one advisory lock before they append and hold it until they
-- commit, so seq orders the changes as their transactions committed and a
-- reader's cursor never passes a change that commits later. Rows are
-- pruned once older than the readers' window.
CREATE TABLE graph_changes (
    seq         BIGSERIAL PRIMARY KEY,
    user_id     TEXT COLLATE "C" NOT NULL,
    entity_id   TEXT COLLATE "C" NOT NULL,
    entity_type TEXT NOT NULL,
    kind        TEXT NOT NULL,
    related_id  TEXT NOT NULL,
    period      TEXT NOT NULL,
    changed_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX graph_changes_at ON graph_changes (changed_at);
