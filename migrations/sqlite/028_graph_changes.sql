-- The graph's change log (graph/changes.go): what each write transaction
-- changed, written in that transaction, so that every process on the same
-- database can tell its MCP resource subscribers (graph.Store.Changes).
-- seq orders the changes as their transactions committed (SQLite
-- serialises writers). Rows are pruned once older than the readers' window.
-- Times are Unix microseconds.
CREATE TABLE graph_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    kind        TEXT NOT NULL,
    related_id  TEXT NOT NULL,
    period      TEXT NOT NULL,
    changed_at  INTEGER NOT NULL
);

CREATE INDEX graph_changes_at ON graph_changes (changed_at);
