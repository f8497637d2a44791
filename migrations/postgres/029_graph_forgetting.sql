-- Retracting and erasing graph data (issue 37, see docs/forgetting.md).
--
-- graph_retractions: observations (of entities or of relationships) that
-- stop counting, with who retracted them, when and why. The observation
-- stays in its table (list_observations shows it); the reducer skips it.
-- Deleting the row undoes the retraction.
CREATE TABLE graph_retractions (
    user_id        TEXT NOT NULL,
    observation_id TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('observation', 'relationship_observation')),
    subject_id     TEXT NOT NULL,
    source_id      TEXT NOT NULL,
    retracted_at   BIGINT NOT NULL,
    actor          TEXT NOT NULL,
    reason         TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (user_id, observation_id)
);
CREATE INDEX graph_retractions_subject ON graph_retractions (user_id, subject_id);

-- What remains of an erased entity or source: ids, time, actor, reason and
-- how many rows of each kind went (counts, JSON); no content.
CREATE TABLE graph_tombstones (
    user_id   TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('entity', 'source')),
    id        TEXT NOT NULL,
    erased_at BIGINT NOT NULL,
    actor     TEXT NOT NULL,
    reason    TEXT NOT NULL DEFAULT '',
    counts    TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (user_id, kind, id)
);

