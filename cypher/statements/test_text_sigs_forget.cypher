// The conformance harness (graph/neo4j TestTextSigBackfill): removes the
// text signatures of the suite's users' entities, as entities stored before
// the driver kept them have none.
MATCH (e:Entity)
WHERE e.user_id IN $userIds
REMOVE e.text_sig
