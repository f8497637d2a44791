-- Forgetting (issue 37): consent rules may name a third action, delete
-- (retracting or erasing).
ALTER TABLE consent_rules DROP CONSTRAINT consent_rules_action_check;
ALTER TABLE consent_rules ADD CONSTRAINT consent_rules_action_check CHECK (action IN ('read', 'write', 'delete'));
