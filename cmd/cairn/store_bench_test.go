package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioStore drives the real binary over stdio with the official
// Go SDK client, as a user's client would, and stores 10,000 people (three
// fields each) in calls of 100 into a new embedded store: the bulk load of
// the side-by-side comparison with the reference memory server. The
// entity-embedding worker runs beside it, as it does in production. It
// reports entities per second end to end and the mean latency of a call in
// the first and in the last tenth of the load, whose ratio says whether a
// call slows down as the store grows, and the CPU time the server spent
// per call (the embedding worker's included), which other load on the
// machine disturbs less than latency. One op is the whole load:
//
//	go test -run '^$' -bench StdioStore -benchtime 1x ./cmd/cairn/
func BenchmarkStdioStore(b *testing.B) {
	const total, batch = 10_000, 100
	bin := cairnBinary(b)
	for b.Loop() {
		b.StopTimer()
		cmd := exec.Command(bin, "stdio", "--data-dir", b.TempDir())
		cmd.Env = os.Environ()
		cmd.Stderr = io.Discard
		client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-bench", Version: "1"}, nil)
		cs, err := client.Connect(b.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		lat := make([]time.Duration, 0, total/batch)
		start := time.Now()
		for first := 0; first < total; first += batch {
			ents := make([]any, batch)
			for i := range ents {
				k := first + i
				ents[i] = map[string]any{
					"entity_type": "person", "name": fmt.Sprintf("quill %06d", k),
					"email": fmt.Sprintf("quill%06d@example.com", k), "company": fmt.Sprintf("company %d", k%500),
				}
			}
			t0 := time.Now()
			res, err := cs.CallTool(b.Context(), &mcpsdk.CallToolParams{Name: "store", Arguments: map[string]any{"entities": ents}})
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if res.IsError {
				b.Fatalf("store: %s", res.Content[0].(*mcpsdk.TextContent).Text)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		cs.Close()
		if err := cmd.Wait(); err != nil && cmd.ProcessState == nil {
			b.Fatal(err)
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		tenth := len(lat) / 10
		mean := func(ds []time.Duration) float64 {
			var sum time.Duration
			for _, d := range ds {
				sum += d
			}
			return float64(sum.Microseconds()) / 1000 / float64(len(ds))
		}
		b.ReportMetric(float64(total)/elapsed.Seconds(), "entities/s")
		b.ReportMetric(mean(lat[:tenth]), "first-tenth-ms")
		b.ReportMetric(mean(lat[len(lat)-tenth:]), "last-tenth-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "server-cpu-ms/call")
		b.StartTimer()
	}
}
