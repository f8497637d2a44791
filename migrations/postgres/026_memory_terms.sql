-- Term statistics for BM25 on PostgreSQL (issue 36). ts_rank_cd ranks a
-- row by its own words only; BM25 also needs how many memories of the
-- collection hold each word (rare words weigh more) and the collection's
-- mean length. Two tables keep them, per user and collection, maintained by
-- statement-level triggers on memories so that a batch insert or delete
-- updates each lexeme once:
--
-- memory_terms: for each lexeme of the collection, how many memories hold
-- it. A lexeme whose count falls to zero is deleted, so an erased memory
-- leaves no word of its text behind (docs/forgetting.md).
-- memory_text_stats: the collection's memory count and the sum of their
-- lengths in lexeme occurrences.
CREATE TABLE memory_terms (
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    lexeme     TEXT NOT NULL,
    docs       BIGINT NOT NULL,
    PRIMARY KEY (user_id, collection, lexeme)
);

CREATE TABLE memory_text_stats (
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    docs       BIGINT NOT NULL,
    lexemes    BIGINT NOT NULL,
    PRIMARY KEY (user_id, collection)
);

-- cairn_tsv_length is a tsvector's length in lexeme occurrences, BM25's
-- document length (a lexeme without positions counts once).
CREATE FUNCTION cairn_tsv_length(v tsvector) RETURNS BIGINT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) FROM unnest(v)
$$;

-- Rows are upserted in lexeme order, so that concurrent saves lock them in
-- the same order and cannot deadlock on each other.
CREATE FUNCTION cairn_memory_terms_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_terms (user_id, collection, lexeme, docs)
    SELECT n.user_id, n.collection, u.lexeme, count(*)
    FROM ins n, unnest(n.tsv) u
    GROUP BY n.user_id, n.collection, u.lexeme
    ORDER BY n.user_id, n.collection, u.lexeme
    ON CONFLICT (user_id, collection, lexeme) DO UPDATE SET docs = memory_terms.docs + EXCLUDED.docs;
    INSERT INTO memory_text_stats (user_id, collection, docs, lexemes)
    SELECT n.user_id, n.collection, count(*), sum(cairn_tsv_length(n.tsv))
    FROM ins n GROUP BY n.user_id, n.collection ORDER BY n.user_id, n.collection
    ON CONFLICT (user_id, collection) DO UPDATE
        SET docs = memory_text_stats.docs + EXCLUDED.docs, lexemes = memory_text_stats.lexemes + EXCLUDED.lexemes;
    RETURN NULL;
END $$;

CREATE FUNCTION cairn_memory_terms_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    WITH gone AS (
        SELECT o.user_id, o.collection, u.lexeme, count(*) AS docs
        FROM del o, unnest(o.tsv) u GROUP BY o.user_id, o.collection, u.lexeme
    )
    UPDATE memory_terms t SET docs = t.docs - g.docs FROM gone g
    WHERE t.user_id = g.user_id AND t.collection = g.collection AND t.lexeme = g.lexeme;
    DELETE FROM memory_terms t USING (SELECT DISTINCT user_id, collection FROM del) o
    WHERE t.user_id = o.user_id AND t.collection = o.collection AND t.docs <= 0;
    WITH gone AS (
        SELECT o.user_id, o.collection, count(*) AS docs, sum(cairn_tsv_length(o.tsv)) AS lexemes
        FROM del o GROUP BY o.user_id, o.collection
    )
    UPDATE memory_text_stats s SET docs = s.docs - g.docs, lexemes = s.lexemes - g.lexemes FROM gone g
    WHERE s.user_id = g.user_id AND s.collection = g.collection;
    DELETE FROM memory_text_stats WHERE docs <= 0;
    RETURN NULL;
END $$;

CREATE TRIGGER memories_terms_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS ins FOR EACH STATEMENT EXECUTE FUNCTION cairn_memory_terms_insert();
CREATE TRIGGER memories_terms_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS del FOR EACH STATEMENT EXECUTE FUNCTION cairn_memory_terms_delete();

-- A memory is never updated in place (update_memory replaces the row, see
-- vector/pgvector), so inserts and deletes are all the triggers need.

INSERT INTO memory_terms (user_id, collection, lexeme, docs)
SELECT m.user_id, m.collection, u.lexeme, count(*) FROM memories m, unnest(m.tsv) u
GROUP BY m.user_id, m.collection, u.lexeme;
INSERT INTO memory_text_stats (user_id, collection, docs, lexemes)
SELECT user_id, collection, count(*), sum(cairn_tsv_length(tsv)) FROM memories GROUP BY user_id, collection;
