-- Consent follows what a file says (issue 34, D2). A record derived from a
-- source carries the entity types the source was found to hold, and is
-- readable only by an agent that may read every one of them.
--
-- memories.types: the types a memory's content is data of (a file's text
-- kept as a memory, an insight drawn from a file). Empty: none, the memory
-- is governed by its collection alone.
ALTER TABLE memories ADD COLUMN types TEXT[] NOT NULL DEFAULT '{}';

-- cairn_files.types: the entity types the file's interpretation stored,
-- as a JSON array, grown before each batch is stored (never shrunk), so a
-- derived record is never visible before its file's types are.
ALTER TABLE cairn_files ADD COLUMN types TEXT NOT NULL DEFAULT '[]';
