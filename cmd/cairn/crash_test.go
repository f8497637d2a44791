package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
)

// TestCrashKeepsAuditRecords kills `cairn serve` with SIGKILL while writers
// and readers call it through the REST facade, and checks that every call
// it answered has its audit record in the store: a call's record must be
// durable before the call is answered, not written later in the background.
// It kills the server three times per backend, each a random 300–800 ms
// after its first answer, and restarts it on the same store each time.
func TestCrashKeepsAuditRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it under load")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		// No rate limits: the writers must reach the store, not get 429s.
		env = append(env, "CAIRN_RATE_LIMIT=0", "CAIRN_RATE_LIMIT_STORE=0")
		const rounds = 3
		var answered, missing int
		for round := range rounds {
			url, kill := startServeProcess(t, dataDir, env...)
			ids, firstErr := loadUntilKilled(t, strings.TrimSuffix(url, "/mcp"), round, kill)
			if len(ids) == 0 {
				t.Fatalf("round %d: no call was answered before the kill (first error: %v); the test proves nothing", round, firstErr)
			}
			lost := unaudited(t, dataDir, env, ids)
			t.Logf("round %d: %d calls answered, %d without an audit record after kill -9", round, len(ids), len(lost))
			answered += len(ids)
			missing += len(lost)
			if len(lost) > 0 {
				t.Errorf("round %d: %d of %d answered calls have no audit record, e.g. %v", round, len(lost), len(ids), lost[:min(3, len(lost))])
			}
		}
		t.Logf("%d kills: %d calls answered, %d without an audit record", rounds, answered, missing)
	})
}

// loadUntilKilled runs writers (store) and readers (retrieve_entities)
// against the REST facade at base, kills the server 300–800 ms after its
// first answer (or after 30 s without one), and
// returns the request id of every call that was answered with a success,
// and the first error a call met (calls that fail are tried again).
func loadUntilKilled(t *testing.T, base string, round int, kill func()) ([]string, error) {
	t.Helper()
	const writers, readers = 6, 2
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: writers + readers},
	}
	defer client.CloseIdleConnections()
	var (
		mu       sync.Mutex
		ids      []string
		firstErr error
	)
	stop := make(chan struct{})
	// The kill comes 300–800 ms after the first answer rather than after
	// the start: a server still busy starting (its embedding worker takes
	// the cores to drain the previous round's outbox) on a loaded machine
	// would otherwise be killed before it answered anything.
	answered := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	worker := func(tool string, body func(i int) string) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id, err := callREST(t, client, base, tool, body(i))
			if err != nil {
				// A server still starting on a loaded machine may time a
				// call out; a killed one refuses it. Either way, try
				// again until the kill stops the load: only answered
				// calls count.
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				continue
			}
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
			once.Do(func() { close(answered) })
		}
	}
	for w := range writers {
		wg.Go(func() {
			worker("store", func(i int) string {
				return fmt.Sprintf(`{"entities": [{"entity_type": "company", "name": "Crash %d-%d-%d"}]}`, round, w, i)
			})
		})
	}
	for range readers {
		wg.Go(func() { worker("retrieve_entities", func(int) string { return `{"limit": 5}` }) })
	}
	select {
	case <-answered:
		time.Sleep(time.Duration(300+rand.IntN(500)) * time.Millisecond)
	case <-time.After(30 * time.Second):
	}
	kill()
	close(stop)
	wg.Wait()
	return ids, firstErr
}

// callREST posts one call to the REST facade and returns its request id.
// Any failure to get a complete successful answer is an error: only calls
// the client saw succeed count as answered.
func callREST(t *testing.T, client *http.Client, base, tool, body string) (string, error) {
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp/call/"+tool, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+testOwnerKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return "", err
	}
	var answer struct {
		Success bool `json:"success"`
		Result  struct {
			Meta struct {
				RequestID string `json:"request_id"`
			} `json:"meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal(buf.Bytes(), &answer); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK || !answer.Success || answer.Result.Meta.RequestID == "" {
		return "", fmt.Errorf("%s: %d %s", tool, resp.StatusCode, buf.String())
	}
	return answer.Result.Meta.RequestID, nil
}

// unaudited opens the store the killed server ran on (recovering it as the
// next process would) and returns the ids that have no call record in the
// owner's audit log.
func unaudited(t *testing.T, dataDir string, env []string, ids []string) []string {
	t.Helper()
	ctx := t.Context()
	cfg := appConfig{dataDir: dataDir}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CAIRN_DATABASE_URL="); ok {
			cfg.databaseURL = v
		}
	}
	b, err := openBackend(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	control := controlplane.New(b.control, b.dialect)
	owner, err := control.OwnerPrincipal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]bool{}
	q := consent.AuditQuery{UserID: owner.UserID, Kind: consent.AuditCall, Limit: 1000}
	for {
		recs, err := control.QueryAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			audited[r.RequestID] = true
		}
		if len(recs) < q.Limit {
			break
		}
		q.BeforeID = recs[len(recs)-1].ID
	}
	var lost []string
	for _, id := range ids {
		if !audited[id] {
			lost = append(lost, id)
		}
	}
	return lost
}
