-- Full-text search over entities (graph.EntitySearcher, docs/graph.md).
--
-- entities.search is the tsvector of every entity's canonical name (weight
-- A) and the string and number values of its snapshot, nested ones included
-- (weight B). The identifiers an entity is found under (entity_identifiers)
-- are normalised copies of its name and of snapshot fields, so indexing
-- those indexes them too. It is a stored generated column: PostgreSQL
-- computes it on every INSERT and UPDATE, whatever writes the entities (one
-- row or many, INSERT or UPSERT), and computed it for every existing row
-- when this migration added it.
--
-- Tokens are what the embedded store's FTS5 index makes: every run of
-- letters and digits, lower-cased ("Quill 004216" gives quill and 004216,
-- "bob@acme.com" bob, acme and com). Punctuation is made a space before
-- the text search parser sees the text, which would otherwise keep an
-- email, a host name or a hyphenated code whole; [[:punct:]] rather than
-- "not alphanumeric", because under the C locale every letter beyond
-- ASCII is not alphanumeric to a regular expression (the parser takes it
-- as a letter). The 'simple' configuration neither stems nor drops stop
-- words, so that names and codes match as written; it lower-cases as the
-- database's LC_CTYPE says (under C, only ASCII). The text is cut to
-- 256 KB, well under the 1 MB a tsvector may hold.
CREATE FUNCTION cairn_entity_search(name TEXT, snapshot JSONB) RETURNS tsvector
LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('simple'::regconfig,
               regexp_replace(left(name, 262144), '[[:punct:]]', ' ', 'g')), 'A')
        || setweight(to_tsvector('simple'::regconfig,
               regexp_replace(left(coalesce((
                   SELECT string_agg(v #>> '{}', ' ')
                   FROM jsonb_path_query(snapshot, 'strict $.**') AS v
                   WHERE jsonb_typeof(v) IN ('string', 'number')), ''), 262144),
               '[[:punct:]]', ' ', 'g')), 'B')
$$;

ALTER TABLE entities ADD COLUMN search tsvector
    GENERATED ALWAYS AS (cairn_entity_search(canonical_name, snapshot)) STORED;

-- GIN buffers new entries in a pending list that every search scans until
-- a vacuum, or the list outgrowing gin_pending_list_limit, merges it into
-- the index. At the default limit (4 MB) a freshly loaded store of 10,000
-- entities searched in 2-3 ms by a sequential scan, which the planner
-- rightly preferred to the index and its list; merged, the index answers
-- in 0.02 ms. 256 kB keeps the list short (searches at 0.9 ms end to end)
-- while writes still add their entries in batches; fastupdate = off, the
-- other cure, made one-row writes up to twice as slow.
CREATE INDEX entities_search ON entities USING GIN (search) WITH (gin_pending_list_limit = 256);
