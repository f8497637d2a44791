package controlplane_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
)

// withOwner bootstraps the owner and returns it.
func withOwner(t *testing.T, s *controlplane.Store) consent.User {
	t.Helper()
	b, err := s.EnsureOwner(t.Context(), "owner", consent.HashKey("owner-key-0123456789abcdef0123456789"), "owner-")
	if err != nil {
		t.Fatal(err)
	}
	return b.User
}

func TestUsersAgentsKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		owner := withOwner(t, s)
		alice, err := s.CreateUser(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUser(ctx, "alice"); !errors.Is(err, controlplane.ErrExists) {
			t.Errorf("second alice: err = %v, want ErrExists", err)
		}
		if _, err := s.CreateUser(ctx, "bad name"); err == nil {
			t.Error("a name with a space was accepted")
		}
		if u, err := s.UserByName(ctx, "alice"); err != nil || u.ID != alice.ID || u.IsOwner {
			t.Errorf("UserByName = %+v, %v", u, err)
		}
		if u, err := s.Owner(ctx); err != nil || u.ID != owner.ID {
			t.Errorf("Owner = %+v, %v", u, err)
		}
		users, err := s.ListUsers(ctx)
		if err != nil || len(users) != 2 {
			t.Errorf("ListUsers = %+v, %v", users, err)
		}
		claude, err := s.CreateAgent(ctx, alice.ID, "claude")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateAgent(ctx, alice.ID, "claude"); !errors.Is(err, controlplane.ErrExists) {
			t.Errorf("second claude: err = %v, want ErrExists", err)
		}
		// The same agent name under another user is another agent.
		ownerClaude, err := s.CreateAgent(ctx, owner.ID, "claude")
		if err != nil || ownerClaude.ID == claude.ID {
			t.Fatalf("owner's claude = %+v, %v", ownerClaude, err)
		}
		if agents, err := s.ListAgents(ctx, alice.ID); err != nil || len(agents) != 1 || agents[0].Name != "claude" {
			t.Errorf("ListAgents = %+v, %v", agents, err)
		}

		// A key for another user's agent is refused.
		if _, _, err := s.CreateKey(ctx, alice.ID, ownerClaude.ID, time.Time{}); !errors.Is(err, controlplane.ErrNotFound) {
			t.Errorf("cross-user key: err = %v, want ErrNotFound", err)
		}
		if _, _, err := s.CreateKey(ctx, alice.ID, claude.ID, time.Now().Add(-time.Hour)); err == nil {
			t.Error("a key that expired already was created")
		}
		expires := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		key, k, err := s.CreateKey(ctx, alice.ID, claude.ID, expires)
		if err != nil {
			t.Fatal(err)
		}
		if consent.CheckKeyFormat(key) != nil || k.Prefix != consent.DisplayPrefix(key) {
			t.Errorf("CreateKey = %q, %+v", key, k)
		}
		got, p, err := s.KeyByHash(ctx, consent.HashKey(key))
		if err != nil || got.ID != k.ID || !got.ExpiresAt.Equal(expires) || p.UserID != alice.ID || p.AgentName != "claude" || p.Owner {
			t.Errorf("KeyByHash = %+v, %+v, %v", got, p, err)
		}
		keys, err := s.ListKeys(ctx, controlplane.KeyFilter{UserID: alice.ID, AgentID: claude.ID})
		if err != nil || len(keys) != 1 || keys[0].AgentName != "claude" || !keys[0].RevokedAt.IsZero() {
			t.Errorf("ListKeys = %+v, %v", keys, err)
		}
		if keys, _ := s.ListKeys(ctx, controlplane.KeyFilter{UserID: owner.ID}); len(keys) != 1 {
			t.Errorf("owner has %d keys, want 1 (the owner key)", len(keys))
		}
		if err := s.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeKey(ctx, "key_missing"); !errors.Is(err, controlplane.ErrNotFound) {
			t.Errorf("revoke missing: err = %v", err)
		}
		a := consent.NewAuthenticator(s, nil)
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, consent.ErrRevokedKey) {
			t.Errorf("revoked key: err = %v, want ErrRevokedKey", err)
		}
		// Expiry, with a clock past it.
		key2, _, err := s.CreateKey(ctx, alice.ID, claude.ID, expires)
		if err != nil {
			t.Fatal(err)
		}
		late := consent.NewAuthenticator(s, func() time.Time { return expires.Add(time.Second) })
		if _, err := late.Authenticate(ctx, key2); !errors.Is(err, consent.ErrExpiredKey) {
			t.Errorf("expired key: err = %v, want ErrExpiredKey", err)
		}
		if p, err := a.Authenticate(ctx, key2); err != nil || p.AgentID != claude.ID {
			t.Errorf("valid key: %+v, %v", p, err)
		}
		if keys, _ := s.ListKeys(ctx, controlplane.KeyFilter{UserID: alice.ID}); len(keys) != 2 || keys[0].LastUsedAt.IsZero() {
			t.Errorf("after use, keys = %+v; want last_used_at set on the newest", keys)
		}
	})
}

func TestRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		owner := withOwner(t, s)
		claude, err := s.CreateAgent(ctx, owner.ID, "claude")
		if err != nil {
			t.Fatal(err)
		}
		cursor, err := s.CreateAgent(ctx, owner.ID, "cursor")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.SetRule(ctx, consent.Rule{UserID: owner.ID, AgentID: claude.ID, Pattern: "tables/*", Action: "read", Effect: "allow"})
		if err != nil || r.Pattern != "entities/*" {
			t.Fatalf("SetRule = %+v, %v", r, err)
		}
		// The same agent, pattern and action: replaced, not stacked.
		r2, err := s.SetRule(ctx, consent.Rule{UserID: owner.ID, AgentID: claude.ID, Pattern: "entities/*", Action: "read", Effect: "deny"})
		if err != nil || r2.ID != r.ID {
			t.Fatalf("SetRule again = %+v, %v; want the same rule id %s", r2, err, r.ID)
		}
		if _, err := s.SetRule(ctx, consent.Rule{UserID: owner.ID, AgentID: cursor.ID, Pattern: "graph", Action: "read", Effect: "allow"}); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []consent.Rule{
			{UserID: owner.ID, AgentID: claude.ID, Pattern: "nope", Action: "read", Effect: "allow"},
			{UserID: owner.ID, AgentID: claude.ID, Pattern: "graph", Action: "erase", Effect: "allow"},
			{UserID: owner.ID, AgentID: claude.ID, Pattern: "graph", Action: "read", Effect: "maybe"},
		} {
			if _, err := s.SetRule(ctx, bad); !errors.Is(err, consent.ErrInvalidRule) {
				t.Errorf("SetRule(%+v): err = %v, want ErrInvalidRule", bad, err)
			}
		}
		other, err := s.CreateUser(ctx, "bob")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetRule(ctx, consent.Rule{UserID: other.ID, AgentID: claude.ID, Pattern: "graph", Action: "read", Effect: "allow"}); !errors.Is(err, controlplane.ErrNotFound) {
			t.Errorf("a rule for another user's agent: err = %v, want ErrNotFound", err)
		}
		rules, err := s.RulesFor(ctx, owner.ID, claude.ID)
		if err != nil || len(rules) != 1 || rules[0].Effect != consent.Deny || rules[0].AgentName != "claude" {
			t.Errorf("RulesFor(claude) = %+v, %v", rules, err)
		}
		all, err := s.ListRules(ctx, owner.ID, "")
		if err != nil || len(all) != 2 {
			t.Errorf("ListRules = %+v, %v", all, err)
		}
		if err := s.DeleteRule(ctx, other.ID, r.ID); !errors.Is(err, controlplane.ErrNotFound) {
			t.Errorf("delete another user's rule: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteRule(ctx, owner.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		if rules, _ := s.RulesFor(ctx, owner.ID, claude.ID); len(rules) != 0 {
			t.Errorf("after delete: %+v", rules)
		}
		// delete is an action of its own (issue 37), stored beside read
		// and write for the same pattern.
		if _, err := s.SetRule(ctx, consent.Rule{UserID: owner.ID, AgentID: claude.ID, Pattern: "vectors/*", Action: "delete", Effect: "allow"}); err != nil {
			t.Fatalf("SetRule(delete): %v", err)
		}
		if _, err := s.SetRule(ctx, consent.Rule{UserID: owner.ID, AgentID: claude.ID, Pattern: "memories/*", Action: "write", Effect: "allow"}); err != nil {
			t.Fatal(err)
		}
		if rules, err := s.RulesFor(ctx, owner.ID, claude.ID); err != nil || len(rules) != 2 ||
			consent.Decide(rules, consent.Delete, "memories/journal") != consent.Allow {
			t.Errorf("RulesFor(claude) with a delete rule = %+v, %v", rules, err)
		}
	})
}

func TestAuditLog(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		log := consent.NewAuditLog(s, consent.AuditLogOptions{BatchSize: 7})
		base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		const n = 50
		for i := range n {
			rec := consent.AuditRecord{At: base.Add(time.Duration(i) * time.Second), UserID: "u1", AgentID: "a1", AgentName: "claude",
				KeyID: "k1", Transport: "http", Tool: "retrieve_entities", Kind: consent.AuditCall, ResultCode: "OK",
				Latency: time.Duration(i) * time.Millisecond, RequestID: fmt.Sprintf("req%d", i)}
			if i%5 == 0 {
				rec.Kind, rec.Action, rec.Resource, rec.Decision = consent.AuditDecision, consent.Read, "entities/invoice", consent.Deny
			}
			if i == 49 {
				rec.UserID = "u2"
			}
			if err := log.Record(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := log.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1", Limit: 1000})
		if err != nil || len(got) != n-1 {
			t.Fatalf("QueryAudit = %d records, %v; want %d", len(got), err, n-1)
		}
		if got[0].RequestID != "req48" || got[0].Latency != 48*time.Millisecond || !got[0].At.Equal(base.Add(48*time.Second)) {
			t.Errorf("newest = %+v", got[0])
		}
		denied, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1", Decision: consent.Deny, Since: base.Add(10 * time.Second)})
		if err != nil || len(denied) != 8 || denied[0].Resource != "entities/invoice" {
			t.Errorf("denied since +10s = %d, %v", len(denied), err)
		}
		page, err := s.QueryAudit(ctx, consent.AuditQuery{UserID: "u1", BeforeID: got[10].ID, Limit: 5})
		if err != nil || len(page) != 5 || page[0].ID != got[11].ID {
			t.Errorf("page before %d = %+v, %v", got[10].ID, page, err)
		}
		if _, err := s.QueryAudit(ctx, consent.AuditQuery{}); err == nil {
			t.Error("a query without a user was accepted")
		}
		// Append-only: the database itself refuses changes.
		if _, err := s.DB().ExecContext(ctx, `UPDATE audit_log SET result = result`); err == nil {
			t.Error("UPDATE audit_log succeeded")
		}
		if _, err := s.DB().ExecContext(ctx, `DELETE FROM audit_log`); err == nil {
			t.Error("DELETE FROM audit_log succeeded")
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		if err := log.Record(ctx, consent.AuditRecord{}); !errors.Is(err, consent.ErrAuditClosed) {
			t.Errorf("Record after Close: %v", err)
		}
	})
}

// TestAppendAuditManyRecords writes more records than PostgreSQL's
// multi-row insert takes in one statement.
func TestAppendAuditManyRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		const n = 1201
		records := make([]consent.AuditRecord, n)
		for i := range records {
			records[i] = consent.AuditRecord{UserID: "u", Tool: "t", RequestID: fmt.Sprint(i), Kind: consent.AuditCall}
		}
		if err := s.AppendAudit(t.Context(), records); err != nil {
			t.Fatal(err)
		}
		got, err := s.QueryAudit(t.Context(), consent.AuditQuery{UserID: "u", Limit: 2 * n})
		if err != nil || len(got) != n {
			t.Errorf("QueryAudit = %d records, %v; want %d", len(got), err, n)
		}
	})
}

// TestAuditLogCloseFlushes races Close with concurrent Records: every
// Record that returned nil has its record in the store, and every other one
// was refused as closed and wrote nothing.
func TestAuditLogCloseFlushes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		log := consent.NewAuditLog(s, consent.AuditLogOptions{})
		const n = 40
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = log.Record(t.Context(), consent.AuditRecord{UserID: "u", Tool: "t", RequestID: fmt.Sprint(i), Kind: consent.AuditCall})
			})
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		got, err := s.QueryAudit(t.Context(), consent.AuditQuery{UserID: "u", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		for _, r := range got {
			stored[r.RequestID] = true
		}
		for i, err := range errs {
			switch {
			case err == nil && !stored[fmt.Sprint(i)]:
				t.Errorf("record %d: Record returned nil but it is not in the store", i)
			case errors.Is(err, consent.ErrAuditClosed) && stored[fmt.Sprint(i)]:
				t.Errorf("record %d: Record was refused as closed but the record is in the store", i)
			case err != nil && !errors.Is(err, consent.ErrAuditClosed):
				t.Errorf("record %d: %v", i, err)
			}
		}
	})
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestRateLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		ctx := t.Context()
		clock := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 30, 0, time.UTC)}
		opts := consent.LimiterOptions{Limits: map[consent.RateClass]int{consent.RateClassDefault: 5, consent.RateClassStore: 3}, Now: clock.Now}
		// Two limiters on one database stand for two processes.
		a, b := consent.NewLimiter(s, opts), consent.NewLimiter(s, opts)
		admitted := 0
		var last consent.RateVerdict
		for i := range 8 {
			l := a
			if i%2 == 1 {
				l = b
			}
			v, err := l.Allow(ctx, "key1", consent.RateClassDefault)
			if err != nil {
				t.Fatal(err)
			}
			if v.Allowed {
				admitted++
			}
			last = v
		}
		if admitted != 5 {
			t.Errorf("two processes admitted %d calls in one window, want the shared limit 5", admitted)
		}
		if last.Allowed || last.Remaining != 0 || last.RetryAfter != 30*time.Second || !last.Reset.Equal(time.Date(2026, 11, 23, 12, 1, 0, 0, time.UTC)) {
			t.Errorf("refused verdict = %+v; want retry after 30s, reset at 12:01", last)
		}
		// Another key and another class have their own limits.
		if v, _ := a.Allow(ctx, "key2", consent.RateClassDefault); !v.Allowed || v.Remaining != 4 {
			t.Errorf("key2 = %+v", v)
		}
		if v, _ := a.Allow(ctx, "key1", consent.RateClassStore); !v.Allowed || v.Limit != 3 || v.Remaining != 2 {
			t.Errorf("store class = %+v", v)
		}
		// After Retry-After, a retry succeeds.
		clock.Add(last.RetryAfter)
		if v, _ := a.Allow(ctx, "key1", consent.RateClassDefault); !v.Allowed || v.Remaining != 4 {
			t.Errorf("after the window: %+v", v)
		}
		// No key (stdio) is not limited.
		if v, _ := a.Allow(ctx, "", consent.RateClassDefault); !v.Allowed || v.Limited() {
			t.Errorf("keyless = %+v", v)
		}
	})
}

func TestRateLimitsConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		clock := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
		l := consent.NewLimiter(s, consent.LimiterOptions{Limits: map[consent.RateClass]int{consent.RateClassDefault: 20}, Now: clock.Now})
		var mu sync.Mutex
		admitted := 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					v, err := l.Allow(t.Context(), "key", consent.RateClassDefault)
					if err != nil {
						t.Error(err)
						return
					}
					if v.Allowed {
						mu.Lock()
						admitted++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if admitted != 20 {
			t.Errorf("80 concurrent calls admitted %d, want exactly the limit 20", admitted)
		}
	})
}
