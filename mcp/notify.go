package mcp

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// The watcher of subscriptions.go: it learns what changed and tells the
// sessions that may read it.

// start runs the watcher until ctx ends: it reads the change log from its
// end now (what other processes change from now on) and listens for this
// process's changes.
func (subs *subscriptions) start(ctx context.Context) {
	k := subs.s.deps.Knowledge
	if k == nil {
		return
	}
	logged := k.HasChangeLog()
	// cursor is where the log is read from; -1 until its end is known
	// (if it cannot be read now, the watcher reads it first).
	cursor := int64(-1)
	if logged {
		if last, err := k.LastChange(ctx); err != nil {
			subs.s.log.Warn("subscriptions: read the change log", "err", err)
		} else {
			cursor = last
		}
	}
	stopWatch := k.WatchChanges(func(cs []graph.Change) {
		if !logged {
			subs.mu.Lock()
			subs.pending = append(subs.pending, cs...)
			if over := len(subs.pending) - maxPendingChanges; over > 0 {
				subs.pending = slices.Delete(subs.pending, 0, over)
			}
			subs.mu.Unlock()
		}
		select {
		case subs.wake <- struct{}{}:
		default:
		}
	})
	go func() {
		defer stopWatch()
		subs.run(ctx, k, logged, cursor)
	}()
}

func (subs *subscriptions) run(ctx context.Context, k *knowledge.Service, logged bool, cursor int64) {
	var tick <-chan time.Time
	if logged {
		t := time.NewTicker(subs.poll)
		defer t.Stop()
		tick = t.C
	}
	// The first read prunes what the log holds from before.
	var lastPrune time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-subs.wake:
		case <-tick:
		}
		if !logged {
			subs.mu.Lock()
			cs := subs.pending
			subs.pending = nil
			subs.mu.Unlock()
			subs.dispatch(ctx, cs)
			continue
		}
		if cursor < 0 {
			last, err := k.LastChange(ctx)
			if err != nil {
				if ctx.Err() == nil {
					subs.s.log.Warn("subscriptions: read the change log", "err", err)
				}
				continue
			}
			cursor = last
		}
		for ctx.Err() == nil {
			cs, err := k.Changes(ctx, cursor, changeBatch)
			if err != nil {
				if ctx.Err() == nil {
					subs.s.log.Warn("subscriptions: read the change log", "err", err)
				}
				break
			}
			if len(cs) > 0 {
				cursor = cs[len(cs)-1].Seq
			}
			subs.dispatch(ctx, cs)
			if len(cs) < changeBatch {
				break
			}
		}
		if time.Since(lastPrune) > ChangeRetention/4 {
			lastPrune = time.Now()
			if err := k.PruneChanges(ctx, time.Now().Add(-ChangeRetention)); err != nil && ctx.Err() == nil {
				subs.s.log.Warn("subscriptions: prune the change log", "err", err)
			}
		}
	}
}

// notice is something a session may be told: a resource updated (uri), or
// the resource list changed (uri empty), if it may read every resource of
// needs.
type notice struct {
	uri   string
	needs []string
}

// dispatch tells each session of the changes' users what it subscribed to
// and may read.
func (subs *subscriptions) dispatch(ctx context.Context, cs []graph.Change) {
	byUser := map[string][]graph.Change{}
	for _, c := range cs {
		byUser[c.UserID] = append(byUser[c.UserID], c)
	}
	for user, changes := range byUser {
		targets := subs.sessionsOf(user)
		if len(targets) == 0 {
			continue
		}
		notices, err := subs.notices(ctx, user, changes)
		if err != nil {
			if ctx.Err() == nil {
				subs.s.log.Warn("subscriptions: what changed", "err", err)
			}
			continue
		}
		subs.tell(ctx, targets, notices)
	}
}

// sessionsOf returns the sessions of a user, with copies of their
// subscriptions.
func (subs *subscriptions) sessionsOf(user string) map[*mcpsdk.ServerSession]subscriber {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	out := map[*mcpsdk.ServerSession]subscriber{}
	for ss, sub := range subs.sessions {
		if sub.p.UserID == user {
			cp := *sub
			cp.uris = make(map[string]string, len(sub.uris))
			for k, v := range sub.uris {
				cp.uris[k] = v
			}
			out[ss] = cp
		}
	}
	return out
}

// notices turns one user's changes into what may be told: the resources
// each change updates, and list changes for types and timeline years that
// appeared, each with the consent a reader needs.
func (subs *subscriptions) notices(ctx context.Context, user string, changes []graph.Change) ([]notice, error) {
	k := subs.s.deps.Knowledge
	var unknown []string
	for _, c := range changes {
		if c.EntityType == "" {
			unknown = append(unknown, c.EntityID)
		}
		if c.RelatedID != "" {
			unknown = append(unknown, c.RelatedID)
		}
	}
	types := map[string]string{}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		var err error
		if types, err = k.EntityTypesOf(ctx, user, slices.Compact(unknown)); err != nil {
			return nil, err
		}
	}
	typeOf := func(c graph.Change) string { return cmp.Or(c.EntityType, types[c.EntityID]) }
	var out []notice
	seen := map[string]bool{}
	add := func(uri string, needs ...string) {
		key := uri + "\x00" + strings.Join(needs, "\x00")
		if !seen[key] {
			seen[key] = true
			out = append(out, notice{uri: uri, needs: needs})
		}
	}
	newTypes, err := subs.newTypes(ctx, user, changes)
	if err != nil {
		return nil, err
	}
	for _, t := range newTypes {
		add("", knowledge.EntityResource(t))
	}
	yearEntities := map[string][]graph.Change{}
	for _, c := range changes {
		typ := typeOf(c)
		if typ == "" {
			continue // gone: nobody reads it any more
		}
		read := knowledge.EntityResource(typ)
		switch c.Kind {
		case graph.ChangeEntity:
			add(resourceScheme+"entity/"+c.EntityID, read)
			add(resourceScheme+"entity/"+c.EntityID+"/observations", read)
			add(resourceScheme+"entities/"+typ, read)
			// What changes an entity is a new observation, and so (but
			// for a source stored again) a new source that produced an
			// observation of typ: the sources collection of those who
			// may read it (list_sources' rule) changed too. An update is
			// a hint to read again, so a source stored again, which
			// changes no list, may tell it once more than needed.
			add(resourceScheme+"sources", knowledge.ResourceSources, read)
		case graph.ChangeRelationships:
			other := types[c.RelatedID]
			if other == "" {
				continue
			}
			add(resourceScheme+"entity/"+c.EntityID+"/relationships", consent.ResourceGraph, read, knowledge.EntityResource(other))
		case graph.ChangeTimeline:
			if len(c.Period) != 7 {
				continue
			}
			add(resourceScheme+"timeline/"+c.Period, read)
			add(resourceScheme+"timeline/"+c.Period[:4], read)
			yearEntities[c.Period[:4]] = append(yearEntities[c.Period[:4]], c)
		}
	}
	for year, cs := range yearEntities {
		isNew, err := subs.newYear(ctx, user, year, cs)
		if err != nil {
			return nil, err
		}
		if isNew {
			for _, c := range cs {
				add("", knowledge.EntityResource(typeOf(c)))
			}
		}
	}
	return out, nil
}

// newTypes returns the types of changed entities that the user had no
// entity of when its first session opened, nor since.
func (subs *subscriptions) newTypes(ctx context.Context, user string, changes []graph.Change) ([]string, error) {
	kl, err := subs.knownOf(ctx, user)
	if err != nil || kl == nil {
		return nil, err
	}
	subs.mu.Lock()
	defer subs.mu.Unlock()
	var out []string
	for _, c := range changes {
		if c.Kind == graph.ChangeEntity && c.EntityType != "" && !kl.types[c.EntityType] {
			kl.types[c.EntityType] = true
			out = append(out, c.EntityType)
		}
	}
	return out, nil
}

// newYear reports whether a timeline year appeared with these changes: no
// other entity of the user has events in it. The answer is remembered.
func (subs *subscriptions) newYear(ctx context.Context, user, year string, cs []graph.Change) (bool, error) {
	kl, err := subs.knownOf(ctx, user)
	if err != nil || kl == nil {
		return false, err
	}
	subs.mu.Lock()
	known := kl.years[year]
	subs.mu.Unlock()
	if known {
		return false, nil
	}
	from, to, err := periodBounds(year)
	if err != nil {
		return false, nil
	}
	k := subs.s.deps.Knowledge
	all, err := k.CountTimelineEvents(ctx, user, "", from, to)
	if err != nil {
		return false, err
	}
	mine := 0
	done := map[string]bool{}
	for _, c := range cs {
		if done[c.EntityID] {
			continue
		}
		done[c.EntityID] = true
		n, err := k.CountTimelineEvents(ctx, user, c.EntityID, from, to)
		if err != nil {
			return false, err
		}
		mine += n
	}
	subs.mu.Lock()
	kl.years[year] = true
	subs.mu.Unlock()
	return all > 0 && all == mine, nil
}

// knownOf returns what is known of a user's lists, reading the user's
// types the first time (as its first session registers); nil when the
// user has no session any more, or the server no knowledge service.
func (subs *subscriptions) knownOf(ctx context.Context, user string) (*knownLists, error) {
	subs.mu.Lock()
	kl := subs.known[user]
	subs.mu.Unlock()
	if kl != nil || subs.s.deps.Knowledge == nil {
		return kl, nil
	}
	types, err := subs.s.deps.Knowledge.UserEntityTypes(ctx, user)
	if err != nil {
		return nil, err
	}
	kl = &knownLists{types: map[string]bool{}, years: map[string]bool{}}
	for _, t := range types {
		kl.types[t] = true
	}
	subs.mu.Lock()
	defer subs.mu.Unlock()
	if !subs.userHasSessions(user) {
		return nil, nil
	}
	if have := subs.known[user]; have != nil {
		return have, nil
	}
	subs.known[user] = kl
	return kl, nil
}

// tell sends the sessions of one user what each subscribed to among
// notices and may read now, and a list change to those that may read
// something that appeared. Consent is asked afresh: rules removed since
// the subscription hold at once.
func (subs *subscriptions) tell(ctx context.Context, targets map[*mcpsdk.ServerSession]subscriber, notices []notice) {
	mays := make(map[*mcpsdk.ServerSession]func(needs []string) bool, len(targets))
	for ss, sub := range targets {
		var d *consent.Decider
		if pol := subs.s.deps.Policy; pol != nil {
			var err error
			if d, err = pol.For(ctx, sub.p); err != nil {
				subs.s.log.Warn("subscriptions: consent rules", "err", err)
				continue
			}
		}
		mays[ss] = func(needs []string) bool {
			for _, r := range needs {
				if d != nil && !d.Allowed(consent.Read, r) {
					return false
				}
			}
			return true
		}
	}
	// The updates, in the order of notices: for each URI as a session
	// subscribed to it, on its server, the sessions to tell.
	type update struct {
		h        *hub
		uri      string
		sessions []*mcpsdk.ServerSession
	}
	var updates []*update
	index := map[[2]any]*update{}
	relist := map[*mcpsdk.ServerSession]*hub{}
	for _, n := range notices {
		for ss, may := range mays {
			sub := targets[ss]
			if n.uri == "" {
				if relist[ss] == nil && may(n.needs) {
					relist[ss] = sub.hub
				}
				continue
			}
			uri, subscribed := sub.uris[n.uri]
			if !subscribed || !may(n.needs) {
				continue
			}
			u := index[[2]any{sub.hub, uri}]
			if u == nil {
				u = &update{h: sub.hub, uri: uri}
				index[[2]any{sub.hub, uri}] = u
				updates = append(updates, u)
			}
			if !slices.Contains(u.sessions, ss) {
				u.sessions = append(u.sessions, ss)
			}
		}
	}
	for _, u := range updates {
		subs.update(ctx, u.h, u.uri, u.sessions)
	}
	if len(relist) > 0 {
		until := time.Now().Add(notifyTimeout)
		hubs := map[*hub]bool{}
		subs.mu.Lock()
		for ss, h := range relist {
			subs.permits[permitKey{ss: ss, method: notificationResourceListChanged}] = until
			hubs[h] = true
		}
		subs.mu.Unlock()
		for h := range hubs {
			h.relist()
		}
	}
}

// update tells sessions of h, and no other, that uri was updated.
func (subs *subscriptions) update(ctx context.Context, h *hub, uri string, sessions []*mcpsdk.ServerSession) {
	subs.sendMu.Lock()
	defer subs.sendMu.Unlock()
	until := time.Now().Add(notifyTimeout)
	subs.mu.Lock()
	for _, ss := range sessions {
		subs.permits[permitKey{ss: ss, method: notificationResourceUpdated, uri: uri}] = until
	}
	subs.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if err := h.srv.ResourceUpdated(ctx, &mcpsdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil && ctx.Err() == nil {
		subs.s.log.Debug("subscriptions: notify", "uri", uri, "err", err)
	}
	subs.mu.Lock()
	for _, ss := range sessions {
		delete(subs.permits, permitKey{ss: ss, method: notificationResourceUpdated, uri: uri})
	}
	subs.mu.Unlock()
}

const (
	notificationResourceUpdated     = "notifications/resources/updated"
	notificationResourceListChanged = "notifications/resources/list_changed"
)
