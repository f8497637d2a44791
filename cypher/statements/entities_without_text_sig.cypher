// graph.TextSigBackfiller (the driver's BackfillTextSigs): up to $limit
// entities, of any user, stored without a text signature or without
// completion keys (before the driver kept them: no name_keys), with an id
// above $afterId, in id order, and what their signature and keys are made
// of. Every write stores both, so once all have theirs this finds nothing;
// finding it walks the entities' ids.
MATCH (e:Entity)
WHERE e.id > $afterId AND (e.text_sig IS NULL OR e.name_keys IS NULL)
RETURN e.id AS id, e.user_id AS user_id, e.entity_type AS entity_type, e.canonical_name AS canonical_name,
  e.snapshot_json AS snapshot_json, e.merged_into AS merged_into
ORDER BY id
LIMIT $limit
