package neo4j

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var userVersion = cypher.Must("user_version")

// statsCacheEntries bounds the entity statistics the cache holds, all
// users together: five users' context loads of 20,000 entities, a few
// tens of megabytes.
const statsCacheEntries = 100_000

// statsCache keeps what ListEntityStats answered in read transactions, by
// user and filter, with the version of the user's graph it was read at.
// Every context load lists the statistics of up to 20,000 entities, which
// a Neo4j server takes tens of milliseconds to read and send however the
// statement is written; the same list is asked for again at every load
// until the user writes. The version is the user's lock node's epoch and
// write count (user_version), which every write transaction of the user
// increments before it writes (user_lock), in this process or another, so
// a reader that finds the version it cached at answers from the cache, and
// any other version (or none) reads the list again.
//
// The version is read before the list, in the same transaction: a write
// that commits between the two reads (Neo4j reads committed data, not a
// snapshot) leaves a newer list under an older version, which the next
// read finds stale, never the reverse. Write transactions neither read nor
// fill the cache: they see their own uncommitted writes, whose version a
// rollback would hand to other data. A text signature set by the
// migrations' backfill (which takes no user's lock) may be missed until
// the user's next write; a missing signature costs a keyword scan a
// screen, never a wrong answer.
type statsCache struct {
	mu   sync.Mutex
	max  int
	held int                        // entities held, all entries
	byID map[statsKey]*list.Element // of *statsEntry
	lru  *list.List                 // most recently used first
}

type statsKey struct{ user, filter string }

type statsEntry struct {
	key     statsKey
	version string
	stats   []graph.EntityStat
}

func newStatsCache(max int) *statsCache {
	return &statsCache{max: max, byID: map[statsKey]*list.Element{}, lru: list.New()}
}

// key is what identifies f's answer besides the user.
func filterKey(f graph.EntityFilter) string {
	return fmt.Sprintf("%q|%t|%d|%d|%t|%t", f.Types, f.IncludeMerged, f.Page.Offset, f.Page.Limit, f.TextSigs, f.WithoutDegrees)
}

// get returns a copy of the list cached for key at version: the caller may
// reorder or filter it (the Degrees and TextSig inside are shared and must
// not be changed).
func (c *statsCache) get(key statsKey, version string) ([]graph.EntityStat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*statsEntry)
	if e.version != version {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return slices.Clone(e.stats), true
}

// put caches a copy of stats for key at version, dropping the least
// recently used entries beyond the bound. A list larger than the bound is
// not cached.
func (c *statsCache) put(key statsKey, version string, stats []graph.EntityStat) {
	if len(stats) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[key]; ok {
		c.held -= len(el.Value.(*statsEntry).stats)
		c.lru.Remove(el)
		delete(c.byID, key)
	}
	c.byID[key] = c.lru.PushFront(&statsEntry{key: key, version: version, stats: slices.Clone(stats)})
	c.held += len(stats)
	for c.held > c.max {
		last := c.lru.Back()
		e := last.Value.(*statsEntry)
		c.lru.Remove(last)
		delete(c.byID, e.key)
		c.held -= len(e.stats)
	}
}

// version reads the version of the user's graph (user_version); ok is
// false when there is none to key on (the user never wrote, or wrote
// before lock nodes had epochs).
func (t *tx) version(ctx context.Context, userID string) (v string, ok bool, err error) {
	rows, err := t.run(ctx, userVersion, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil || len(rows) != 1 {
		return "", false, err
	}
	r := record{m: rows[0]}
	epoch, writes := r.str("epoch"), r.int64("writes")
	if r.err != nil || epoch == "" {
		return "", false, r.err
	}
	return fmt.Sprintf("%s/%d", epoch, writes), true, nil
}

// cachedEntityStats is ListEntityStats through the Driver's cache, in a
// read transaction (listEntityStats reads the server).
func (t *tx) cachedEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if t.write || t.stats == nil {
		return t.listEntityStats(ctx, f)
	}
	version, ok, err := t.version(ctx, f.UserID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return t.listEntityStats(ctx, f)
	}
	key := statsKey{f.UserID, filterKey(f)}
	if stats, hit := t.stats.get(key, version); hit {
		return stats, nil
	}
	stats, err := t.listEntityStats(ctx, f)
	if err == nil {
		t.stats.put(key, version, stats)
	}
	return stats, err
}
