package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
)

// A call that runs longer than ProgressEvery tells a client that asked
// (progressToken) that it is still working, with increasing values; a
// tool's own reports continue the beats and stop them; a client that did
// not ask hears nothing.
func TestLongCallsReportProgress(t *testing.T) {
	s, err := NewServer(Deps{}, Options{ProgressEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Sleep  string `json:"sleep"`
		Report bool   `json:"report,omitempty"`
	}
	type out struct {
		Slept bool `json:"slept"`
	}
	slow := newTool(toolSpec{name: "slow", title: "Slow", description: "sleeps", toolset: ToolsetEntities, ann: readOnly, budget: BudgetList},
		func(ctx context.Context, _ *Call, in in) (out, error) {
			d, _ := time.ParseDuration(in.Sleep)
			time.Sleep(d)
			if in.Report {
				report := progressFrom(ctx)
				report(0.5, 10, "too small: under the beats")
				for i := 1; i <= 3; i++ {
					report(float64(i), 3, "item")
				}
				report(2, 3, "going back")
				time.Sleep(d)
			}
			return out{Slept: true}, nil
		})
	s.tools = append(s.tools, slow)
	s.byName["slow"] = slow

	type note struct {
		progress, total float64
		message         string
	}
	var mu sync.Mutex
	notes := map[any][]note{}
	ct, st := mcpsdk.NewInMemoryTransports()
	p := consent.Principal{UserID: "u", AgentName: "owner", Owner: true}
	ss, err := s.MCPServer(FixedPrincipal(p)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcpsdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			notes[r.Params.ProgressToken] = append(notes[r.Params.ProgressToken], note{r.Params.Progress, r.Params.Total, r.Params.Message})
		},
	})
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(token string, args map[string]any) time.Time {
		t.Helper()
		params := &mcpsdk.CallToolParams{Name: "slow", Arguments: args}
		if token != "" {
			params.SetProgressToken(token)
		}
		res, err := cs.CallTool(t.Context(), params)
		if err != nil || res.IsError {
			b, _ := json.Marshal(res)
			t.Fatalf("slow: %v %s", err, b)
		}
		return time.Now()
	}
	increasing := func(token string) []note {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		ns := notes[token]
		for i := 1; i < len(ns); i++ {
			if ns[i].progress <= ns[i-1].progress {
				t.Errorf("%s: progress %v after %v: it must increase", token, ns[i].progress, ns[i-1].progress)
			}
		}
		return ns
	}

	call("beats", map[string]any{"sleep": "300ms"})
	call("", map[string]any{"sleep": "100ms"})
	call("quick", map[string]any{"sleep": "0s"})
	call("reports", map[string]any{"sleep": "100ms", "report": true})
	time.Sleep(100 * time.Millisecond) // the client handles notifications apart from answers

	beats := increasing("beats")
	if len(beats) < 3 {
		t.Fatalf("a 300 ms call with beats every 20 ms sent %d progress notifications, want several", len(beats))
	}
	for _, n := range beats {
		if n.progress >= 1 || n.total != 0 {
			t.Errorf("beat %+v: want progress under 1, no total", n)
		}
	}
	if got := increasing("quick"); len(got) != 0 {
		t.Errorf("a call that took no time sent %v", got)
	}
	own := increasing("reports")
	var items []float64
	for _, n := range own {
		if n.total == 3 {
			items = append(items, n.progress)
		}
	}
	// (increasing checked that a report at or under the beats before it,
	// or going back, was dropped.)
	if len(items) != 3 || items[2] != 3 {
		t.Errorf("the tool's reports arrived as %v, want 1, 2, 3 of 3", items)
	}
	if len(own) > 0 && own[len(own)-1].total != 3 {
		t.Errorf("a beat came after the tool's own reports: %+v", own)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) > 3 {
		t.Errorf("progress went to a call that asked for none: %v", notes)
	}
}

// Once a call has answered, its reporter sends nothing more, neither beats
// nor a late report of its tool (which may have handed the reporter to
// work that outlives the call).
func TestProgressStopsAtTheAnswer(t *testing.T) {
	var mu sync.Mutex
	var sent []float64
	r := &progressReporter{send: func(p, _ float64, _ string) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, p)
	}}
	stop := r.run(time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	stop()
	mu.Lock()
	n := len(sent)
	mu.Unlock()
	if n == 0 {
		t.Fatal("no beat in 20 ms at one a millisecond")
	}
	r.report(100, 100, "late")
	r.beat(time.Hour)
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != n {
		t.Fatalf("sent %v after the answer", sent[n:])
	}
}
