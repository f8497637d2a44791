package postgres

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/cairnkg/cairn/graph"
)

var _ graph.EntityCompleter = (*tx)(nil)

// PutEntities and BackfillTextSigs store graph.NameKeysJSON as
// entities.name_keys (migration 032), from which triggers keep entity_keys
// current: JSON rather than a text[] parameter, since a batch's arrays
// differ in length, which a two-dimensional array may not.

// nameKeysSQL turns the JSON array of graph.NameKeysJSON, the column u.nk of an
// unnest, into the text[] entities.name_keys holds, in its order.
const nameKeysSQL = `ARRAY(SELECT k FROM jsonb_array_elements_text(u.nk::jsonb) WITH ORDINALITY AS a(k, n) ORDER BY n)`

// CompleteEntities implements graph.EntityCompleter with entity_keys
// (migration 032): for each type and kind, a range of its primary key, cut
// at the limit, the ranges merged by the outer ORDER BY. Names are two
// kinds (name and inner keys), each its own range, so that a completion
// of names reads at most twice its limit per type. Without a list of
// types, those the user has (EntityTypes: an index skip) are the ranges.
func (t *tx) CompleteEntities(ctx context.Context, q graph.EntityCompletion) ([]graph.EntityCompletionHit, error) {
	out := []graph.EntityCompletionHit{}
	// No key holds a NUL or bytes that are not UTF-8, which a text
	// parameter may not hold either.
	if q.Prefix == "" || strings.ContainsRune(q.Prefix, 0) || !utf8.ValidString(q.Prefix) {
		return out, nil
	}
	types := q.Types
	if types == nil {
		var err error
		if types, err = t.EntityTypes(ctx, q.UserID); err != nil {
			return nil, err
		}
	}
	if len(types) == 0 {
		return out, nil
	}
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	kinds := []int16{graph.KeyName, graph.KeyInner}
	if q.IDs {
		kinds = []int16{graph.KeyID}
	}
	// Every key that begins with the prefix sorts before the prefix's
	// successor (as bytes, which UTF-8 orders as code points), and every
	// other key from the prefix on after it.
	bound := `k.key < $3`
	end, ok := successor(q.Prefix)
	if !ok {
		bound = `starts_with(k.key, $2) AND $3 = ''`
	}
	hits, err := query(ctx, t, func(r rowScanner) (graph.EntityCompletionHit, error) {
		var h graph.EntityCompletionHit
		var kind int16
		err := r.Scan(&h.ID, &kind, &h.Key)
		h.Kind = int(kind)
		return h, err
	}, `SELECT h.entity_id, h.kind, h.key
		FROM unnest($4::text[]) AS t(typ) CROSS JOIN unnest($5::smallint[]) AS c(kind)
		CROSS JOIN LATERAL (SELECT k.entity_id, k.kind, k.key FROM entity_keys k
			WHERE k.user_id = $1 AND k.entity_type = t.typ AND k.kind = c.kind AND k.key >= $2 AND `+bound+`
			ORDER BY k.key, k.entity_id LIMIT $6) AS h
		ORDER BY h.kind, h.key, h.entity_id LIMIT $6`,
		q.UserID, q.Prefix, end, types, kinds, q.Limit)
	if err != nil {
		return nil, wrap("complete entities", err)
	}
	return graph.FirstCompletions(hits, q.Limit), nil
}

// successor returns the least text after every text that begins with p:
// p with its last character replaced by the next one, dropping trailing
// U+10FFFF; ok is false when p is nothing but U+10FFFF.
func successor(p string) (string, bool) {
	for p != "" {
		r, size := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-size]
		switch {
		case r == utf8.MaxRune:
			continue
		case r == 0xD7FF: // the surrogates are no characters
			return p + "\uE000", true
		default:
			return p + string(r+1), true
		}
	}
	return "", false
}
