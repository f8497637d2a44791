package neo4j

import (
	"context"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var entityTexts = cypher.Must("entity_texts")

// ScreenEntityText implements graph.TextScreener: it reads the entities'
// snapshot text without decoding it and screens it here with
// graph.WordScreen, rather than trusting Cypher's toLower() to fold as Go
// does.
func (t *tx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, entityTexts, cypher.Fill{}, map[string]any{"userId": userID, "ids": ids})
	if err != nil {
		return nil, err
	}
	screen := graph.NewWordScreen(words)
	var out []string
	for _, m := range rows {
		r := record{m: m}
		id, typ, name, snap := r.str("id"), r.str("entity_type"), r.str("canonical_name"), r.str("snapshot_json")
		if r.err != nil {
			return nil, r.err
		}
		if screen.Keep([]byte(typ), []byte(name), []byte(snap)) {
			out = append(out, id)
		}
	}
	return out, nil
}
