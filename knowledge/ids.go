package knowledge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// canonicalJSON encodes v with sorted object keys, exact numbers and no HTML
// escaping: the same value always gives the same bytes, which is what
// content addressing needs.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("knowledge: canonical json: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// sha256Hex returns the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// hashID derives a short stable id with a prefix from its parts.
func hashID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return prefix + hex.EncodeToString(h.Sum(nil)[:12])
}

// relationshipObservationID is the id of what source srcID says about
// relationship relID at now: the same request at the same time gets the
// same id, so that it is stored once. It begins with now, in microseconds
// as 13 hex digits (enough until 2112), so that the ids of one call, and
// of calls in a row, are neighbours in the primary key's index: random
// ids put every new observation on a page of its own, each written to the
// WAL at commit (a tenth of the pages of a create_relationships call of
// 100 at 10,000 relationships on the embedded store). The hash that
// follows is the one the ids had before, cut to 8 bytes.
func relationshipObservationID(relID, srcID string, now time.Time) string {
	h := hashID("", relID, srcID, now.Format(time.RFC3339Nano))
	return fmt.Sprintf("robs_%013x%s", now.UnixMicro(), h[:16])
}

// movedMark separates, in the id of a relationship observation that a
// merge copied onto the merge target's relationship, the id of the
// observation first recorded (its root) from what names the relationship
// it was copied to. Observation ids hold no dot otherwise.
const movedMark = ".m"

// movedObservationID is the id of the copy of root on relationship relID
// that merges made: the same whatever merges, in whatever order, carried
// it there, and it names root (rootObservationID), so that a retraction,
// kept under the root's id, holds for every copy.
func movedObservationID(root, relID string) string {
	return root + movedMark + hashID("", root, relID)[:16]
}

// rootObservationID is the id of the observation a relationship
// observation is a copy of (movedObservationID), or id itself for one
// first recorded where it is.
func rootObservationID(id string) string {
	root, _, _ := strings.Cut(id, movedMark)
	return root
}

// SourceID is the id of the user's source with a content hash.
func SourceID(userID, contentHash string) string { return hashID("src_", userID, contentHash) }

// EntityID is the id of the entity of a type whose normalised identity is
// identity. Ids are per user: the same company stored by two users is two
// entities.
func EntityID(userID, entityType, identity string) string {
	return hashID("ent_", userID, entityType, identity)
}

// NormalizeIdentifier folds an identifier for matching: lower case, every
// run of characters other than letters, digits and '@' collapsed to one
// space, trimmed. "ACME, Inc." and "acme inc" normalise alike.
func NormalizeIdentifier(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '@' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// identityOf returns the normalised identity of an entity's fields under its
// schema: the identity fields' values in schema order. An entity with none
// of them is identified by all of its schema fields instead, so that the
// same content still gives the same id; under a user's own schema (one
// that evolves from the data) by all of the fields given, schema fields
// and unknown ones alike, as given (before a schema field's type made a
// number of "800" or a text of 800), so that neither promoting a field
// later nor the order of the stores that shaped the schema changes which
// id the same content gets.
func identityOf(s *schema.Schema, fields, given map[string]any) (string, error) {
	parts := make([]string, 0, len(s.IdentityFields))
	found := false
	for _, name := range s.IdentityFields {
		v, ok := fields[name]
		if !ok {
			parts = append(parts, "")
			continue
		}
		norm := NormalizeIdentifier(schema.ValueText(v))
		found = found || norm != ""
		parts = append(parts, norm)
	}
	if found {
		return strings.Join(parts, "\x1f"), nil
	}
	content := fields
	if s.Owner != "" {
		content = given
	}
	b, err := canonicalJSON(content)
	if err != nil {
		return "", err
	}
	return "content:" + sha256Hex(b), nil
}
