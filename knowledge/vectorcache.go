package knowledge

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/cairnkg/cairn/vector"
)

// DefaultEntityVectorCache is how many entity vectors topic ranking keeps
// in memory unless Options.EntityVectorCache says otherwise: every
// candidate of the largest context load (2 × MaxTopicCandidates) of ten
// users, or every candidate a load of a 20,000-entity user may look at.
// At the built-in model's 512 dimensions a vector takes 516 bytes packed,
// so the cache holds at most about 12 MB with its keys.
const DefaultEntityVectorCache = 20_000

// entityVectorCache keeps the entity vectors topic ranking used, packed as
// the entity store keeps them (vector.PackInt8), by what each was made
// from: the user, the embedder and the hash of the entity's text
// (entityTextHash). It is addressed by content, not by entity: an entity
// whose text changes has a new hash, and its old vector is never
// returned for it, so nothing needs to be invalidated, whichever process
// wrote the change. A vector comes back exactly as EntityStore.Get would
// give it (RoundInt8 of the one embedded), so a ranking is the same
// whether its vectors came from here or from the store.
//
// A nil *entityVectorCache keeps nothing.
type entityVectorCache struct {
	lru *lru.Cache[vectorKey, []byte]
}

type vectorKey struct {
	userID, embedder, textHash string
}

// newEntityVectorCache returns a cache of size vectors: 0 means
// DefaultEntityVectorCache, less than 0 none (nil).
func newEntityVectorCache(size int) *entityVectorCache {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultEntityVectorCache
	}
	c, err := lru.New[vectorKey, []byte](size)
	if err != nil { // only for a size below 1
		return nil
	}
	return &entityVectorCache{lru: c}
}

// get returns the vector made by embedder from the user's text whose hash
// is textHash, packed (vector.PackInt8), or nil. dim, when not 0, is the
// dimension it must have. The caller must not change it.
func (c *entityVectorCache) get(userID, embedder string, dim int, textHash string) []byte {
	if c == nil {
		return nil
	}
	packed, ok := c.lru.Get(vectorKey{userID, embedder, textHash})
	if !ok || len(packed) < 4 || dim != 0 && len(packed) != 4+dim {
		return nil
	}
	return packed
}

// has reports whether get would return a vector.
func (c *entityVectorCache) has(userID, embedder string, dim int, textHash string) bool {
	if c == nil {
		return false
	}
	packed, ok := c.lru.Peek(vectorKey{userID, embedder, textHash})
	return ok && len(packed) >= 4 && (dim == 0 || len(packed) == 4+dim)
}

// put keeps e's vector under its text hash and returns it packed, or nil
// when it is not kept: vectors with a component that is not finite, which
// the store would not take either, are not.
func (c *entityVectorCache) put(e vector.EntityEmbedding) []byte {
	if len(e.Embedding) == 0 || e.TextHash == "" || !vector.Finite(e.Embedding) {
		return nil
	}
	packed := vector.PackInt8(e.Embedding)
	if c != nil {
		c.lru.Add(vectorKey{e.UserID, e.Space.Embedder, e.TextHash}, packed)
	}
	return packed
}

// entityTextCache keeps the entity texts (graph.EntityText) that context
// loading read, by the user and the text's hash, so that the keyword scan
// of topicCandidates finds the text of a candidate whose signature holds
// its hash (graph.TextSig.TextHash) without reading its snapshot. Like
// entityVectorCache it is addressed by content: a changed entity has a
// new hash, so nothing needs to be invalidated. A text is at most
// graph.MaxEntityText bytes, so at DefaultEntityVectorCache entries it
// holds at most about 7 MB with its keys.
//
// A nil *entityTextCache keeps nothing.
type entityTextCache struct {
	lru *lru.Cache[textKey, string]
}

type textKey struct {
	userID, textHash string
}

// newEntityTextCache returns a cache of size texts, sized as
// newEntityVectorCache sizes its vectors.
func newEntityTextCache(size int) *entityTextCache {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultEntityVectorCache
	}
	c, err := lru.New[textKey, string](size)
	if err != nil {
		return nil
	}
	return &entityTextCache{lru: c}
}

// get returns the user's entity text whose entityTextHash is textHash.
func (c *entityTextCache) get(userID, textHash string) (string, bool) {
	if c == nil {
		return "", false
	}
	return c.lru.Get(textKey{userID, textHash})
}

// put keeps the user's entity text under textHash, which must be its
// entityTextHash.
func (c *entityTextCache) put(userID, textHash, text string) {
	if c != nil {
		c.lru.Add(textKey{userID, textHash}, text)
	}
}

// purge empties the cache: an erasure leaves no erased entity's text in
// the process's memory (the vector cache is purged with it).
func (c *entityTextCache) purge() {
	if c != nil {
		c.lru.Purge()
	}
}

// purge empties the cache (see entityTextCache.purge).
func (c *entityVectorCache) purge() {
	if c != nil {
		c.lru.Purge()
	}
}
