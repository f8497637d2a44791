package neo4j

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	userVersionGet   = cypher.Must("user_version")
	entityStatsDelta = cypher.Must("entity_stats_delta")
)

// statsCacheEntries bounds the entity statistics the cache holds, all
// users together: five users' context loads of 20,000 entities, a few
// tens of megabytes.
const statsCacheEntries = 100_000

// statsCache keeps what ListEntityStats answered in read transactions, by
// user and filter, with the version of the user's graph it was read at.
// Every context load lists the statistics of up to 20,000 entities, which
// a Neo4j server takes tens of milliseconds to read and send however the
// statement is written, and most of the list is the same from one load to
// the next. The version is the user's lock node's epoch and write count
// (user_version), which every write transaction of the user increments
// before it writes (user_lock), in this process or another, and stamps on
// the entities whose statistics it changes (user_write: those it puts, and
// both ends of the relationships it puts). A reader that finds the version
// it cached at answers from the cache; one that finds a later count of the
// same epoch reads only the entities stamped since (catchUp); any other
// version (or none) reads the list again.
//
// The version is read before the list, in the same transaction: a write
// that commits between the two reads (Neo4j reads committed data, not a
// snapshot) leaves a newer list under an older version, which the next
// read catches up with again, never the reverse. Write transactions
// neither read nor fill the cache: they see their own uncommitted writes,
// whose version a rollback would hand to other data. Any statement that
// changes what ListEntityStats lists must move the version and stamp what
// it changed, as entities_put, relationship(s)_put and the text-signature
// backfill (entities_text_sig_set) do.
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
	version userVersion
	stats   []graph.EntityStat
}

// userVersion is a version of a user's graph: the epoch of the user's lock
// node and the count of the user's writes.
type userVersion struct {
	epoch  string
	writes int64
}

func newStatsCache(max int) *statsCache {
	return &statsCache{max: max, byID: map[statsKey]*list.Element{}, lru: list.New()}
}

// key is what identifies f's answer besides the user.
func filterKey(f graph.EntityFilter) string {
	return fmt.Sprintf("%q|%t|%d|%d|%t|%t", f.Types, f.IncludeMerged, f.Page.Offset, f.Page.Limit, f.TextSigs, f.WithoutDegrees)
}

// get returns a copy of the list cached for key, and the version it was
// read at: the caller may reorder or filter it (the Degrees and TextSig
// inside are shared and must not be changed).
func (c *statsCache) get(key statsKey) ([]graph.EntityStat, userVersion, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[key]
	if !ok {
		return nil, userVersion{}, false
	}
	e := el.Value.(*statsEntry)
	c.lru.MoveToFront(el)
	return slices.Clone(e.stats), e.version, true
}

// put caches a copy of stats for key at version, dropping the least
// recently used entries beyond the bound. A list larger than the bound is
// not cached.
func (c *statsCache) put(key statsKey, version userVersion, stats []graph.EntityStat) {
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
func (t *tx) version(ctx context.Context, userID string) (v userVersion, ok bool, err error) {
	rows, err := t.run(ctx, userVersionGet, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil || len(rows) != 1 {
		return userVersion{}, false, err
	}
	r := record{m: rows[0]}
	v = userVersion{epoch: r.str("epoch"), writes: r.int64("writes")}
	if r.err != nil || v.epoch == "" {
		return userVersion{}, false, r.err
	}
	return v, true, nil
}

// cachedEntityStats is ListEntityStats through the Driver's cache, in a
// read transaction (listEntityStats reads the server): the cached list
// when the user has not written since, the cached list caught up with the
// entities written since when it can be (catchUp), else the server's.
func (t *tx) cachedEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if t.write || t.stats == nil {
		return t.listEntityStats(ctx, f)
	}
	v, ok, err := t.version(ctx, f.UserID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return t.listEntityStats(ctx, f)
	}
	key := statsKey{f.UserID, filterKey(f)}
	cached, at, found := t.stats.get(key)
	switch {
	case found && at == v:
		return cached, nil
	case found && at.epoch == v.epoch && at.writes < v.writes && f.Page.Offset == 0:
		stats, ok, err := t.catchUp(ctx, f, cached, at.writes)
		if err != nil {
			return nil, err
		}
		if ok {
			t.stats.put(key, v, stats)
			return stats, nil
		}
	}
	stats, err := t.listEntityStats(ctx, f)
	if err == nil {
		t.stats.put(key, v, stats)
	}
	return stats, err
}

// catchUp brings base, the first page (f) of the user's statistics at the
// user's write since, up to date with the entities stamped by a later
// write (entity_stats_delta): each replaces its old entry, or is dropped
// when it no longer matches f, and the page is sorted again. Entities not
// stamped kept their statistics and their order. ok is false when the
// answer cannot be had from base: a full page lost entities, and those
// that follow it in the server's order are unknown here.
func (t *tx) catchUp(ctx context.Context, f graph.EntityFilter, base []graph.EntityStat, since int64) (stats []graph.EntityStat, ok bool, err error) {
	rows, err := t.run(ctx, entityStatsDelta, cypher.Fill{}, map[string]any{
		"userId": f.UserID, "since": since, "textSigs": f.TextSigs, "degrees": !f.WithoutDegrees,
	})
	if err != nil {
		return nil, false, err
	}
	if len(rows) != 1 {
		return nil, false, fmt.Errorf("graph/neo4j: entity_stats_delta returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	entries := r.rows("stats", append(slices.Clone(entityStatColumns), "neighbour_types")...)
	if r.err != nil {
		return nil, false, r.err
	}
	changed := make(map[string]graph.EntityStat, len(entries))
	for _, m := range entries {
		st, err := toEntityStat(m)
		if err != nil {
			return nil, false, err
		}
		er := record{m: m}
		for _, typ := range er.strings("neighbour_types") {
			st.Degrees = graph.AddDegree(st.Degrees, typ, 1)
		}
		if er.err != nil {
			return nil, false, er.err
		}
		changed[st.ID] = st
	}
	limit := limitOr(f.Page, 100)
	full := len(base) >= limit
	kept := base[:0]
	for _, s := range base {
		if _, ok := changed[s.ID]; !ok {
			kept = append(kept, s)
		}
	}
	var last graph.EntityStat
	if full {
		if len(kept) == 0 {
			return nil, false, nil
		}
		last = kept[len(kept)-1]
	}
	for _, s := range changed {
		if (f.Types == nil || slices.Contains(f.Types, s.Type)) && (f.IncludeMerged || s.MergedInto == "") {
			kept = append(kept, s)
		}
	}
	slices.SortFunc(kept, statOrder)
	if full {
		// Every entity the server has after last comes after it here
		// too: the page holds all that come before it, and is whole if
		// they are enough.
		at, _ := slices.BinarySearchFunc(kept, last, statOrder)
		if at+1 < limit {
			return nil, false, nil
		}
	}
	return kept[:min(len(kept), limit)], true, nil
}

// statOrder is entity_stats_list's order: the most recently observed
// first, then the smaller id.
func statOrder(a, b graph.EntityStat) int {
	if c := b.LastObservationAt.Compare(a.LastObservationAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
