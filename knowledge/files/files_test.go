package files_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/cairnkg/cairn/controlplane"
	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
)

// clock is a settable clock shared by the service and the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a files service on one backend, with what tests look into.
type env struct {
	svc     *files.Service
	control *controlplane.Store
	know    *knowledge.Service
	graph   *graph.Store
	bucket  *blob.Bucket
	clock   *clock
}

type backend struct {
	name string
	open func(t *testing.T) (*controlplane.Store, *graph.Store)
}

var backends = []backend{
	{"embedded", func(t *testing.T) (*controlplane.Store, *graph.Store) {
		db := sqlitetest.Open(t)
		g := graph.NewStore(embedded.New(db))
		t.Cleanup(func() { g.Close() })
		return controlplane.New(db.Write, migrations.SQLite), g
	}},
	{"postgres", func(t *testing.T) (*controlplane.Store, *graph.Store) {
		db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := graph.NewStore(graphpostgres.New(db.Pool))
		t.Cleanup(func() { g.Close(); db.Close() })
		return controlplane.New(db.SQL, migrations.Postgres), g
	}},
}

func forEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

func newEnv(t *testing.T, b backend, o files.Options) *env {
	t.Helper()
	cp, g := b.open(t)
	return newEnvOn(t, cp, g, o, knowledge.Options{})
}

// newEnvOn is newEnv on given stores, with the knowledge service's options
// (its clock and graph forgetting are the env's).
func newEnvOn(t *testing.T, cp *controlplane.Store, g *graph.Store, o files.Options, ko knowledge.Options) *env {
	t.Helper()
	bucket, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{NoTempDir: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	ko.Now, ko.GraphForget = clk.Now, cp
	know := knowledge.NewService(g, schema.NewRegistry(), ko)
	o.Bucket, o.Meta, o.Jobs, o.Knowledge, o.Now = bucket, cp, cp, know, clk.Now
	o.SpoolDir = t.TempDir()
	svc := files.New(o)
	know.SetFileEraser(svc.EraseFile)
	return &env{svc: svc, control: cp, know: know, graph: g, bucket: bucket, clock: clk}
}

var (
	alice = knowledge.Caller{UserID: "user-alice", AgentID: "claude"}
	bob   = knowledge.Caller{UserID: "user-bob", AgentID: "claude"}
)

func put(t *testing.T, e *env, c knowledge.Caller, name string, data []byte) files.Stored {
	t.Helper()
	st, err := e.svc.Put(t.Context(), c, bytes.NewReader(data), files.PutRequest{Filename: name})
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	return st
}

func blobKeys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var keys []string
	it := b.List(nil)
	for {
		o, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.Key)
	}
}

func TestPutIsContentAddressedPerUser(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		data := []byte("# Groceries\n\nmilk, eggs\n")
		first := put(t, e, alice, "list.md", data)
		if first.Deduplicated || first.File.MimeType != "text/markdown" || first.File.Size != int64(len(data)) {
			t.Fatalf("first put = %+v", first)
		}
		again := put(t, e, alice, "other-name.md", data)
		if !again.Deduplicated || again.File.ID != first.File.ID {
			t.Fatalf("same bytes again = %+v, want deduplicated %s", again, first.File.ID)
		}
		other := put(t, e, bob, "list.md", data)
		if other.Deduplicated || other.File.ID == first.File.ID {
			t.Fatalf("another user's same bytes = %+v, want a file of their own", other)
		}
		keys := blobKeys(t, e.bucket)
		if len(keys) != 2 {
			t.Fatalf("bucket keys = %v, want one blob per user", keys)
		}
		got, _, err := e.svc.ReadAll(t.Context(), alice.UserID, first.File.ID)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back = %q, %v", got, err)
		}
		// The file is a source of the graph.
		err = e.graph.View(t.Context(), func(tx *graph.Tx) error {
			src, err := tx.Source(t.Context(), alice.UserID, first.File.ID)
			if err == nil && (src.Kind != graph.SourceFile || src.ContentHash != first.File.ContentHash) {
				err = fmt.Errorf("source = %+v", src)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.File(t.Context(), bob, first.File.ID); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("bob reads alice's file: %v, want ErrFileNotFound", err)
		}
	})
}

func TestPutRefusals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{MaxFileBytes: 1000, QuotaBytes: 1500})
		var tooLarge *files.TooLargeError
		_, err := e.svc.Put(t.Context(), alice, bytes.NewReader(bytes.Repeat([]byte("a"), 1001)), files.PutRequest{Filename: "a.txt"})
		if !errors.As(err, &tooLarge) || tooLarge.Max != 1000 {
			t.Fatalf("1001 bytes: %v, want TooLargeError", err)
		}
		var unsupported *files.UnsupportedError
		elf := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)
		if _, err := e.svc.Put(t.Context(), alice, bytes.NewReader(elf), files.PutRequest{Filename: "x.txt", MimeType: "text/plain"}); !errors.As(err, &unsupported) {
			t.Fatalf("an executable declared as text: %v, want UnsupportedError", err)
		}
		put(t, e, alice, "a.txt", bytes.Repeat([]byte("a"), 900))
		var quota *files.QuotaError
		if _, err := e.svc.Put(t.Context(), alice, bytes.NewReader(bytes.Repeat([]byte("b"), 900)), files.PutRequest{Filename: "b.txt"}); !errors.As(err, &quota) ||
			quota.Used != 900 || quota.Quota != 1500 || quota.Size != 900 {
			t.Fatalf("over quota: %v, want QuotaError{900, 1500, 900}", err)
		}
		if keys := blobKeys(t, e.bucket); len(keys) != 1 {
			t.Fatalf("bucket keys after refusals = %v, want only the accepted file", keys)
		}
		// Another user has their own quota.
		put(t, e, bob, "b.txt", bytes.Repeat([]byte("b"), 900))
		denied := knowledge.Caller{UserID: alice.UserID, Allowed: func(a knowledge.Action, r string) bool { return r != knowledge.ResourceSources }}
		var access *knowledge.AccessError
		if _, err := e.svc.Put(t.Context(), denied, strings.NewReader("x"), files.PutRequest{}); !errors.As(err, &access) {
			t.Fatalf("without sources write: %v, want AccessError", err)
		}
	})
}

// A crash between the blob and the source leaves a pending row: the next
// start completes it when the blob was written, and removes it when not.
func TestRecoverAfterInterruptedUpload(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		ctx := t.Context()
		data := []byte("written, then the process died")
		hash := sha(data)
		written := files.File{ID: knowledge.SourceID(alice.UserID, hash), UserID: alice.UserID, ContentHash: hash,
			BlobKey: files.BlobKey(alice.UserID, hash), Size: int64(len(data)), MimeType: "text/plain", Filename: "w.txt",
			CreatedAt: e.clock.Now()}
		if _, _, err := e.control.BeginFile(ctx, written); err != nil {
			t.Fatal(err)
		}
		if err := e.bucket.WriteAll(ctx, written.BlobKey, data, nil); err != nil {
			t.Fatal(err)
		}
		lostHash := sha([]byte("never written"))
		lost := written
		lost.ID, lost.ContentHash, lost.BlobKey = knowledge.SourceID(alice.UserID, lostHash), lostHash, files.BlobKey(alice.UserID, lostHash)
		if _, _, err := e.control.BeginFile(ctx, lost); err != nil {
			t.Fatal(err)
		}
		// Before recovery neither is visible.
		if _, err := e.svc.File(ctx, alice, written.ID); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("pending file visible: %v", err)
		}
		e.clock.Advance(time.Minute)
		got, err := e.svc.Recover(ctx, 0)
		if err != nil || got != (files.Recovered{Repaired: 1, Removed: 1}) {
			t.Fatalf("Recover = %+v, %v; want 1 repaired, 1 removed", got, err)
		}
		if f, err := e.svc.File(ctx, alice, written.ID); err != nil || f.State != files.StateStored {
			t.Fatalf("repaired file = %+v, %v", f, err)
		}
		if _, err := e.control.File(ctx, alice.UserID, lost.ID); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("lost file row: %v, want removed", err)
		}
		// Storing the repaired bytes again is a deduplicated store.
		if st := put(t, e, alice, "w.txt", data); !st.Deduplicated {
			t.Fatalf("re-upload after repair = %+v, want deduplicated", st)
		}
		if got, err := e.svc.Recover(ctx, 0); err != nil || got != (files.Recovered{}) {
			t.Fatalf("second Recover = %+v, %v; want nothing to do", got, err)
		}
	})
}

func TestSignedURL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{BaseURL: "http://127.0.0.1:7400"})
		ctx := t.Context()
		st := put(t, e, alice, "a.txt", []byte("hello"))
		u, err := e.svc.SignURL(ctx, alice, st.File.ID, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !u.ExpiresAt.Equal(e.clock.Now().Add(10 * time.Minute)) {
			t.Fatalf("expires at %v", u.ExpiresAt)
		}
		q := query(t, u.URL)
		if f, err := e.svc.VerifyURL(ctx, st.File.ID, q); err != nil || f.ID != st.File.ID {
			t.Fatalf("verify = %+v, %v", f, err)
		}
		for name, alter := range map[string]func(q map[string][]string){
			"signature": func(q map[string][]string) { q["sig"] = []string{strings.Repeat("A", len(q["sig"][0]))} },
			"expiry":    func(q map[string][]string) { q["exp"] = []string{fmt.Sprint(e.clock.Now().Add(time.Hour).Unix())} },
			"user":      func(q map[string][]string) { q["u"] = []string{bob.UserID} },
		} {
			q := query(t, u.URL)
			alter(q)
			if _, err := e.svc.VerifyURL(ctx, st.File.ID, q); !errors.Is(err, files.ErrBadSignature) {
				t.Errorf("altered %s: %v, want ErrBadSignature", name, err)
			}
		}
		e.clock.Advance(10 * time.Minute)
		if _, err := e.svc.VerifyURL(ctx, st.File.ID, q); !errors.Is(err, files.ErrBadSignature) {
			t.Fatalf("expired: %v, want ErrBadSignature", err)
		}
		if _, err := e.svc.SignURL(ctx, bob, st.File.ID, 0); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("bob signs alice's file: %v, want ErrFileNotFound", err)
		}
		long, err := e.svc.SignURL(ctx, alice, st.File.ID, 365*24*time.Hour)
		if err != nil || long.ExpiresAt.After(e.clock.Now().Add(files.MaxURLTTL)) {
			t.Fatalf("a year asked = %v, %v; want capped at MaxURLTTL", long.ExpiresAt, err)
		}
	})
}

func TestSigningSecretSharedAndStable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		cp, _ := b.open(t)
		var wg sync.WaitGroup
		secrets := make([][]byte, 6)
		for i := range secrets {
			wg.Go(func() {
				s, err := cp.SigningSecret(context.WithoutCancel(t.Context()))
				if err != nil {
					t.Error(err)
				}
				secrets[i] = s
			})
		}
		wg.Wait()
		for _, s := range secrets[1:] {
			if len(s) != 32 || !bytes.Equal(s, secrets[0]) {
				t.Fatalf("secrets differ or are short: %x vs %x", s, secrets[0])
			}
		}
	})
}
