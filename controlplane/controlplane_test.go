package controlplane_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/migrations"
)

// backend opens a fresh, migrated control plane on one backend.
type backend struct {
	name string
	open func(t testing.TB) *controlplane.Store
}

// backends are every backend the control plane runs on. Each test runs
// against all of them; the PostgreSQL one skips (or fails under CI) when
// there is no server, as pgtest decides.
var backends = []backend{
	{"SQLite", func(t testing.TB) *controlplane.Store {
		t.Helper()
		db := sqlitetest.Open(t)
		return controlplane.New(db.Write, migrations.SQLite)
	}},
	{"Postgres", func(t testing.TB) *controlplane.Store {
		t.Helper()
		db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return controlplane.New(db.SQL, migrations.Postgres)
	}},
}

// forEachBackend runs test once per backend, as a parallel subtest.
func forEachBackend(t *testing.T, test func(t *testing.T, s *controlplane.Store)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.open(t))
		})
	}
}

func TestEnsureOwner(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		// Concurrent first runs agree on one owner; exactly one creates it.
		const n = 8
		results := make([]controlplane.Bootstrap, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				key := consent.HashKey(string(rune('a'+i)) + "-key-0123456789abcdef0123456789")
				results[i], errs[i] = s.EnsureOwner(t.Context(), "owner", key, "pfx")
			})
		}
		wg.Wait()
		created := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("EnsureOwner %d: %v", i, errs[i])
			}
			if results[i].Created {
				created++
			}
			if results[i].User.ID != results[0].User.ID || results[i].Agent.ID != results[0].Agent.ID {
				t.Errorf("EnsureOwner %d: owner %s/%s, want %s/%s", i, results[i].User.ID, results[i].Agent.ID, results[0].User.ID, results[0].Agent.ID)
			}
		}
		if created != 1 {
			t.Errorf("%d calls created the owner, want 1", created)
		}

		p, err := s.OwnerPrincipal(t.Context())
		if err != nil || !p.Owner || p.AgentName != consent.OwnerAgent || p.UserID != results[0].User.ID {
			t.Errorf("OwnerPrincipal = %+v, %v", p, err)
		}
	})
}

func TestKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *controlplane.Store) {
		const key = "test-owner-key-0123456789abcdef0123456789"
		b, err := s.EnsureOwner(t.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key))
		if err != nil {
			t.Fatal(err)
		}
		k, p, err := s.KeyByHash(t.Context(), consent.HashKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if k.ID != b.KeyID || p.UserID != b.User.ID || !p.Owner || p.KeyID != b.KeyID || !k.LastUsedAt.IsZero() {
			t.Errorf("KeyByHash = %+v, %+v; want the owner key, never used", k, p)
		}
		used := time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)
		if err := s.TouchKey(t.Context(), k.ID, used); err != nil {
			t.Fatal(err)
		}
		if k, _, _ = s.KeyByHash(t.Context(), consent.HashKey(key)); !k.LastUsedAt.Equal(used) {
			t.Errorf("LastUsedAt = %v, want %v", k.LastUsedAt, used)
		}
		if _, _, err := s.KeyByHash(t.Context(), consent.HashKey("another-key-0123456789abcdef0123456789")); !errors.Is(err, consent.ErrUnknownKey) {
			t.Errorf("unknown key: err = %v, want consent.ErrUnknownKey", err)
		}
	})
}
