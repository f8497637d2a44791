// Entity search with the portable meaning of a match (graph/search.go):
// every term a word of the entity's canonical name or of its snapshot
// text. entities_put stores both as the driver cuts them (graph.SearchText:
// lower-cased words joined by spaces), so the whitespace analyzer tokenizes
// them exactly as every other backend does. The index of 003, over names
// and identifier values, is replaced: an entity's identifiers are
// normalised copies of its name and snapshot fields. Entities written
// before this migration are found once they are written again.
DROP INDEX entity_text IF EXISTS;

CREATE FULLTEXT INDEX entity_search IF NOT EXISTS
FOR (e:Entity) ON EACH [e.search_name, e.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
