-- Forgetting (issue 37): consent rules may name a third action, delete
-- (retracting or erasing). SQLite cannot change a CHECK constraint in
-- place, so consent_rules is rebuilt with the same columns and rows.
CREATE TABLE consent_rules_new (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    agent_id   TEXT NOT NULL REFERENCES agents(id),
    pattern    TEXT NOT NULL,
    action     TEXT NOT NULL CHECK (action IN ('read', 'write', 'delete')),
    effect     TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, agent_id, pattern, action)
);
INSERT INTO consent_rules_new (id, user_id, agent_id, pattern, action, effect, created_at)
    SELECT id, user_id, agent_id, pattern, action, effect, created_at FROM consent_rules;
DROP TABLE consent_rules;
ALTER TABLE consent_rules_new RENAME TO consent_rules;
