// graph.TextSigBackfiller (the driver's BackfillTextSigs): up to $limit
// entities, of any user, stored without a text signature (before the
// driver kept them), with an id above $afterId, in id order, and what
// their signature is made from. Every write stores one, so once all have
// theirs this finds nothing; finding it walks the entities' ids.
MATCH (e:Entity)
WHERE e.id > $afterId AND e.text_sig IS NULL
RETURN e.id AS id, e.entity_type AS entity_type, e.canonical_name AS canonical_name,
  e.snapshot_json AS snapshot_json
ORDER BY id
LIMIT $limit
