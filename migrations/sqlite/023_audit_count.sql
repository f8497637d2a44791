-- One consent record per decision that matters (issue 35): the allowed
-- reads of one kind of resource in one call (a context load's entity types)
-- are one record, which counts them; a denial is always a record of its own.
ALTER TABLE audit_log ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
