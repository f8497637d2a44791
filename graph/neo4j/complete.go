package neo4j

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	entityComplete    = cypher.Must("entity_complete")
	entityCompleteAny = cypher.Must("entity_complete_any")
)

var _ graph.EntityCompleter = (*tx)(nil)

// Completion keys are nodes, (:EntityKey {user_id, entity_type, kind, key,
// entity_id}), one per key of each unmerged entity (migrations/neo4j/007).
// entities_put replaces an entity's keys when its name keys, type or
// merged state change, with the keys computed here (graph.NameKeys, which
// Cypher's toLower and split could only approximate), and records the name keys
// they were made of on the entity (name_keys), which is also how the
// backfill at start finds the entities stored before the keys were kept.
// erase_nodes deletes the keys with their entity.

// nameKeys is graph.NameKeys(name) as entities_put stores it on the entity:
// a list, empty rather than null for a name without words, so that a
// stored entity's name_keys is null only when it has no keys yet.
func nameKeys(name string) []string {
	if k := graph.NameKeys(name); k != nil {
		return k
	}
	return []string{}
}

// keySep joins the parts of a key's type_order and user_order: a
// character that no key holds (keys are words and single spaces) and that
// sorts before every character a key may hold, so that a key sorts before
// the longer keys it begins.
const keySep = "\x01"

// typeScope and userScope begin the type_order and user_order of the
// user's keys of a type and kind, and of a kind: what a completion's
// prefix follows in entity_complete and entity_complete_any.
func typeScope(userID, typ string, kind int) string {
	return userID + keySep + typ + keySep + strconv.Itoa(kind) + keySep
}

func userScope(userID string, kind int) string {
	return userID + keySep + strconv.Itoa(kind) + keySep
}

// completionKeys are the keys of an entity's :EntityKey nodes, as the rows
// of entities_put and entities_text_sig_set carry them: its name key, its
// inner keys and its id, or none when it is merged, each with its
// type_order and user_order (the scope, the key and the entity id).
func completionKeys(userID, typ, id, name string, merged bool) []any {
	if merged {
		return []any{}
	}
	key := func(kind int, k string) map[string]any {
		return map[string]any{
			"kind": int64(kind), "key": k,
			"type_order": typeScope(userID, typ, kind) + k + keySep + id,
			"user_order": userScope(userID, kind) + k + keySep + id,
		}
	}
	names := graph.NameKeys(name)
	out := make([]any, 0, len(names)+1)
	for i, k := range names {
		out = append(out, key(min(i, graph.KeyInner), k))
	}
	return append(out, key(graph.KeyID, id))
}

// CompleteEntities implements graph.EntityCompleter: for a list of types,
// entity_complete, for each type and kind a seek of the index
// entity_key_type_order in its order, cut at the limit, so that a
// completion of names reads at most twice its limit of keys per type; for
// every type (q.Types nil), entity_complete_any, one such seek per kind of
// the index entity_key_user_order, which holds the first keys of every
// type together without a listing of the types first.
func (t *tx) CompleteEntities(ctx context.Context, q graph.EntityCompletion) ([]graph.EntityCompletionHit, error) {
	out := []graph.EntityCompletionHit{}
	// No key holds keySep or bytes that are not UTF-8 (which Bolt would
	// not carry as they are).
	if q.Prefix == "" || !utf8.ValidString(q.Prefix) || strings.Contains(q.Prefix, keySep) || q.Types != nil && len(q.Types) == 0 {
		return out, nil
	}
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	kinds := []int{graph.KeyName, graph.KeyInner}
	if q.IDs {
		kinds = []int{graph.KeyID}
	}
	var scopes []any
	st := entityCompleteAny
	if q.Types == nil {
		for _, kind := range kinds {
			scopes = append(scopes, map[string]any{"order": userScope(q.UserID, kind)})
		}
	} else {
		st = entityComplete
		for _, typ := range q.Types {
			for _, kind := range kinds {
				scopes = append(scopes, map[string]any{"order": typeScope(q.UserID, typ, kind)})
			}
		}
	}
	rows, err := t.run(ctx, st, cypher.Fill{}, map[string]any{"userId": q.UserID, "scopes": scopes, "prefix": q.Prefix, "limit": int64(q.Limit)})
	if err != nil {
		return nil, err
	}
	keys := make([]graph.EntityCompletionHit, 0, len(rows))
	for _, m := range rows {
		r := record{m: m}
		h := graph.EntityCompletionHit{ID: r.str("entity_id"), Kind: r.int("kind"), Key: r.str("key")}
		if r.err != nil {
			return nil, r.err
		}
		keys = append(keys, h)
	}
	return graph.FirstCompletions(keys, q.Limit), nil
}
