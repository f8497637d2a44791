-- Memories' HNSW indexes hold half-precision copies of the vectors
-- (pgvector's halfvec): the same graph in about half the pages (112 MB
-- instead of 195 MB for 100,000 vectors of 384 dimensions), so that more
-- of it stays in shared buffers, and a filtered search, which walks far
-- more of the graph than an unfiltered one, reads fewer pages. Searches
-- order candidates by the half-precision distance and report, and re-sort
-- by, the exact one computed from the stored vector (vector/pgvector).
-- The vectors are normalised first (which changes no cosine distance):
-- halfvec holds at most 65,504, a stored float32 may be far larger. halfvec
-- also lets dimensions up to 4,000 be indexed (vector stops at 2,000).
--
-- Every per-dimension index vector/pgvector created (memories_hnsw_<dim>,
-- 384 from 003_memories.sql) is rebuilt; on a large table this migration
-- takes as long as building those indexes.
DO $$
DECLARE
    r   record;
    dim text;
BEGIN
    FOR r IN SELECT indexname FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'memories' AND indexname ~ '^memories_hnsw_[0-9]+$'
    LOOP
        dim := substring(r.indexname FROM '[0-9]+$');
        EXECUTE format('DROP INDEX %I', r.indexname);
        EXECUTE format('CREATE INDEX %I ON memories USING hnsw ((l2_normalize(embedding)::halfvec(%s)) halfvec_cosine_ops) WHERE dimension = %s',
            'memories_hnsw_half_' || dim, dim, dim);
    END LOOP;
END
$$;
