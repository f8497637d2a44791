package neo4j

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// typeCacheUsers bounds the users whose types the cache holds: a few tens
// of types each, a few megabytes at most.
const typeCacheUsers = 10_000

// typeCache keeps, by user, what EntityTypes and EntityTypeCounts answered
// in read transactions, with the version of the user's graph it was read
// at (user_version, as statsCache keys on). Every completion, search and
// listing of a caller who may not read every type lists the user's types
// first (knowledge's readableTypes): on Neo4j a seek per type and one more
// (entity_types_after, without a hint), 20-30 ms for 21 types, and the counts of an entity
// type completion read every entity (entity_type_counts, 70 ms at 10,000).
// Both change only when the user writes, which moves the version: a
// reader that finds the version it cached at answers from the cache, after
// one statement (user_version) rather than the listing. Write
// transactions neither read nor fill it (see statsCache).
type typeCache struct {
	mu     sync.Mutex
	max    int
	byUser map[string]*typeEntry
}

type typeEntry struct {
	version userVersion
	types   []string       // nil when not read at version
	counts  map[string]int // nil when not read at version
}

func newTypeCache(max int) *typeCache {
	return &typeCache{max: max, byUser: map[string]*typeEntry{}}
}

// get returns a copy of the user's types and counts cached at version v
// (either nil when not cached at v).
func (c *typeCache) get(user string, v userVersion) (types []string, counts map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byUser[user]
	if !ok || e.version != v {
		return nil, nil
	}
	return slices.Clone(e.types), maps.Clone(e.counts)
}

// hint returns the user's types as last cached, at whatever version
// (nil when none are): what the user had before a write, for
// entityTypes to confirm rather than find one by one. A nil cache has
// none.
func (c *typeCache) hint(user string) []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byUser[user]
	switch {
	case !ok:
		return nil
	case e.types != nil:
		return slices.Clone(e.types)
	default:
		return slices.Collect(maps.Keys(e.counts))
	}
}

// put caches a copy of the user's types or counts (nil: not given) read at
// v, dropping what the user's entry held at another version. A full cache
// drops an entry at random (Go's map order) to make room.
func (c *typeCache) put(user string, v userVersion, types []string, counts map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byUser[user]
	if !ok || e.version != v {
		if !ok && len(c.byUser) >= c.max {
			for u := range c.byUser {
				delete(c.byUser, u)
				break
			}
		}
		e = &typeEntry{version: v}
		c.byUser[user] = e
	}
	if types != nil {
		e.types = slices.Clone(types)
	}
	if counts != nil {
		e.counts = maps.Clone(counts)
	}
}

// cachedTypes is EntityTypes (read, listEntityTypes) through the Driver's
// type cache in a read transaction; the types of the cached counts serve
// as well (EntityTypes is the types of EntityTypeCounts).
// read is given the types cached at any version, or nil, as a hint.
func (t *tx) cachedTypes(ctx context.Context, userID string, read func(hint []string) ([]string, error)) ([]string, error) {
	v, ok, err := t.typeCacheVersion(ctx, userID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return read(t.types.hint(userID))
	}
	types, counts := t.types.get(userID, v)
	switch {
	case types != nil:
		return types, nil
	case counts != nil:
		return slices.Sorted(maps.Keys(counts)), nil
	}
	types, err = read(t.types.hint(userID))
	if err == nil {
		t.types.put(userID, v, types, nil)
	}
	return types, err
}

// cachedTypeCounts is EntityTypeCounts (read) through the Driver's type
// cache in a read transaction.
func (t *tx) cachedTypeCounts(ctx context.Context, userID string, read func() (map[string]int, error)) (map[string]int, error) {
	v, ok, err := t.typeCacheVersion(ctx, userID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return read()
	}
	if _, counts := t.types.get(userID, v); counts != nil {
		return counts, nil
	}
	counts, err := read()
	if err == nil {
		t.types.put(userID, v, nil, counts)
	}
	return counts, err
}

// typeCacheVersion is the version of the user's graph the type cache is
// read and filled at; ok is false when the transaction reads through it
// (a write transaction, or a user whose graph has no version yet).
func (t *tx) typeCacheVersion(ctx context.Context, userID string) (v userVersion, ok bool, err error) {
	if t.write || t.types == nil {
		return userVersion{}, false, nil
	}
	return t.version(ctx, userID)
}
