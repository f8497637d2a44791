package mcp

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
)

// Resource subscriptions (resources/subscribe). A client subscribes to an
// entity (cairn://entity/{id}, its /observations or /relationships), a
// collection (cairn://entities/{type}) or the timeline of a year or a
// month (cairn://timeline/{period}); when what it reads changes (a store,
// a correction, a merge, a relationship created or deleted, an
// interpretation's or an import's writes, in this process or another on
// the same database) it gets notifications/resources/updated, and every
// session gets notifications/resources/list_changed when a type or a
// timeline year appears that it may read.
//
// The SDK keeps the map of subscribed sessions (by the URI each
// subscribed with, for both the initialize protocols and SEP-2575's
// subscriptions/listen, whose notifications carry the listen's id), and
// its Server.ResourceUpdated sends to every session in it without asking
// anyone. Cairn keeps a registry beside it: for every session, who it is
// and what it subscribed to. When something changes, it asks consent for
// each subscriber, then calls ResourceUpdated with permits for those
// that may read it, and a sending middleware drops the notification for
// every other session; so a rule removed during a subscription stops its
// notifications at once. List changes go the same way: the SDK tells
// every session when a resource template is added again, and only
// permitted sessions get it. A URI a caller may not read cannot be
// subscribed to, and answers exactly as resources/read does: not found.
//
// What changed comes from the graph (graph/changes.go): at once for this
// process's writes, and for other processes' from the graph's change log,
// read every Options.SubscriptionPoll while sessions are open. With no
// session open nothing runs.

const (
	// DefaultSubscriptionPoll is how often a server with open sessions
	// reads the change log for changes of other processes, unless
	// Options.SubscriptionPoll says otherwise.
	DefaultSubscriptionPoll = 2 * time.Second
	// MaxSubscriptionsPerSession bounds what one session may subscribe to.
	MaxSubscriptionsPerSession = 1000
	// changeBatch is how many logged changes one read takes.
	changeBatch = 512
	// maxPendingChanges bounds the changes of this process waiting to be
	// told when the graph keeps no change log; past it the oldest are
	// dropped (a notification is a hint to read again, not the data).
	maxPendingChanges = 4096
	// ChangeRetention is how long logged changes are kept: far longer
	// than a poll, so that every process reads them first. A server
	// prunes older ones as it polls, and cairn serve hourly whether or
	// not a session is open.
	ChangeRetention = time.Hour
	// notifyTimeout bounds the sending of one notification, and is how
	// long a permit to send one to a session holds.
	notifyTimeout = 5 * time.Second
)

// subscriptions is the registry of a Server's sessions and what they
// subscribed to, and the watcher that tells them of changes.
type subscriptions struct {
	s    *Server
	poll time.Duration

	mu       sync.Mutex
	sessions map[*mcpsdk.ServerSession]*subscriber
	// known are, per user with open sessions, the types and years already
	// seen, so that a new one is told as a list change.
	known map[string]*knownLists
	// stop ends the watcher; nil while none runs.
	stop context.CancelFunc
	// wake tells the watcher that this process changed something.
	wake chan struct{}
	// pending are this process's changes not told yet (only when the
	// graph keeps no change log).
	pending []graph.Change

	// sendMu serialises updates, during which permits name the sessions
	// that may get them (until the time each holds).
	sendMu  sync.Mutex
	permits map[permitKey]time.Time
}

// subscriber is one session: who it is, the server it belongs to, and its
// subscriptions (by canonical cairn:// URI, to the URI it subscribed with).
type subscriber struct {
	p    consent.Principal
	hub  *hub
	uris map[string]string
}

// hub is one SDK server and how to make it tell its sessions that the
// resource list changed.
type hub struct {
	srv    *mcpsdk.Server
	relist func()
}

// permitKey is a notification one session may be sent: its method and,
// for an update, the URI.
type permitKey struct {
	ss     *mcpsdk.ServerSession
	method string
	uri    string
}

type knownLists struct {
	types, years map[string]bool
}

func newSubscriptions(s *Server, poll time.Duration) *subscriptions {
	if poll <= 0 {
		poll = DefaultSubscriptionPoll
	}
	return &subscriptions{s: s, poll: poll, sessions: map[*mcpsdk.ServerSession]*subscriber{}, known: map[string]*knownLists{},
		wake: make(chan struct{}, 1), permits: map[permitKey]time.Time{}}
}

// handlers are resources/subscribe and resources/unsubscribe for a server
// whose resource templates specs will hold (they are added after the
// server is made).
func (subs *subscriptions) handlers(who PrincipalFunc, transport string, specs *[]resourceSpec) (sub func(context.Context, *mcpsdk.SubscribeRequest) error, unsub func(context.Context, *mcpsdk.UnsubscribeRequest) error) {
	sub = func(ctx context.Context, req *mcpsdk.SubscribeRequest) error {
		uri := req.Params.URI
		canonical, ok := canonicalURI(uri)
		if !ok {
			return mcpsdk.ResourceNotFoundError(uri)
		}
		// Reading it is what decides whether it may be subscribed to: the
		// same answer for a URI that is not Cairn's, one that names
		// nothing and one the caller may not read.
		if _, err := subs.s.readResource(ctx, who, transport, &mcpsdk.ReadResourceRequest{
			Session: req.Session, Params: &mcpsdk.ReadResourceParams{URI: canonical}, Extra: req.Extra,
		}, *specs); err != nil {
			return err
		}
		if strings.HasPrefix(canonical, resourceScheme+"source/") {
			return invalidParams("a source does not change once stored; subscribe to the entities it produced")
		}
		p, err := who(ctx, req.Extra)
		if err != nil {
			return rpcError(toError(err))
		}
		return subs.add(req.Session, p, canonical, uri)
	}
	unsub = func(ctx context.Context, req *mcpsdk.UnsubscribeRequest) error {
		if canonical, ok := canonicalURI(req.Params.URI); ok {
			subs.remove(req.Session, canonical)
		}
		return nil
	}
	return sub, unsub
}

// canonicalURI is uri in the cairn:// scheme, unescaped and without a
// page's query (a page of a list is the list), if it is one of Cairn's
// (cairn:// or neotoma://).
func canonicalURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	if !ok {
		rest, ok = strings.CutPrefix(uri, resourceSchemeAlias)
	}
	if !ok {
		return "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	if p, err := url.PathUnescape(rest); err == nil {
		rest = p
	}
	return resourceScheme + rest, true
}

// middleware registers every session at its first request, with the
// principal it runs as and its server, so that it can be told of list
// changes and, once it subscribes, of updates.
func (subs *subscriptions) middleware(who PrincipalFunc, h *hub) mcpsdk.Middleware {
	return func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			if ss, ok := req.GetSession().(*mcpsdk.ServerSession); ok && ss != nil && !subs.registered(ss) {
				if p, err := who(ctx, req.GetExtra()); err == nil {
					subs.register(ctx, ss, p, h)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// filter is the sending middleware that lets a resource notification
// through only to a session with a permit for it.
func (subs *subscriptions) filter(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		key := permitKey{method: method}
		switch p := req.GetParams().(type) {
		case *mcpsdk.ResourceUpdatedNotificationParams:
			key.uri = p.URI
		case *mcpsdk.ResourceListChangedParams:
		default:
			return next(ctx, method, req)
		}
		key.ss, _ = req.GetSession().(*mcpsdk.ServerSession)
		subs.mu.Lock()
		until, ok := subs.permits[key]
		if ok && method == notificationResourceListChanged {
			delete(subs.permits, key)
		}
		subs.mu.Unlock()
		if !ok || time.Now().After(until) {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

func (subs *subscriptions) registered(ss *mcpsdk.ServerSession) bool {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	_, ok := subs.sessions[ss]
	return ok
}

// register adds a session, starts the watcher if it is the first, notes
// the types its user has (a type that appears later is a list change),
// and drops the session when it ends.
func (subs *subscriptions) register(ctx context.Context, ss *mcpsdk.ServerSession, p consent.Principal, h *hub) {
	subs.mu.Lock()
	if _, ok := subs.sessions[ss]; ok {
		subs.mu.Unlock()
		return
	}
	subs.sessions[ss] = &subscriber{p: p, hub: h, uris: map[string]string{}}
	first := subs.stop == nil
	var watch context.Context
	if first {
		watch, subs.stop = context.WithCancel(context.Background())
	}
	subs.mu.Unlock()
	if first {
		subs.start(watch)
	}
	if _, err := subs.knownOf(ctx, p.UserID); err != nil {
		subs.s.log.Warn("subscriptions: the user's types", "err", err)
	}
	go func() {
		_ = ss.Wait()
		subs.drop(ss)
	}()
}

// drop forgets a session that ended; the last one stops the watcher.
func (subs *subscriptions) drop(ss *mcpsdk.ServerSession) {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	sub, ok := subs.sessions[ss]
	if !ok {
		return
	}
	delete(subs.sessions, ss)
	for k := range subs.permits {
		if k.ss == ss {
			delete(subs.permits, k)
		}
	}
	if !subs.userHasSessions(sub.p.UserID) {
		delete(subs.known, sub.p.UserID)
	}
	if len(subs.sessions) == 0 && subs.stop != nil {
		subs.stop()
		subs.stop = nil
		subs.pending = nil
	}
}

func (subs *subscriptions) userHasSessions(userID string) bool {
	for _, s := range subs.sessions {
		if s.p.UserID == userID {
			return true
		}
	}
	return false
}

func (subs *subscriptions) add(ss *mcpsdk.ServerSession, p consent.Principal, canonical, uri string) error {
	if ss == nil {
		return invalidParams("resources/subscribe needs a session")
	}
	subs.mu.Lock()
	defer subs.mu.Unlock()
	sub, ok := subs.sessions[ss]
	if !ok || sub.p.UserID != p.UserID || sub.p.KeyID != p.KeyID {
		return invalidParams("the session is not known; initialize it again")
	}
	if _, has := sub.uris[canonical]; !has && len(sub.uris) >= MaxSubscriptionsPerSession {
		return invalidParams(fmt.Sprintf("a session may subscribe to %d resources at most; unsubscribe from some first", MaxSubscriptionsPerSession))
	}
	sub.uris[canonical] = uri
	return nil
}

func (subs *subscriptions) remove(ss *mcpsdk.ServerSession, canonical string) {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	if sub, ok := subs.sessions[ss]; ok {
		delete(sub.uris, canonical)
	}
}
