// Command cairn-healthcheck is the health check of Cairn's container image:
// it asks the cairn serve in the same container whether it is ready
// (GET /readyz) and exits 0 when it answers 200, 1 otherwise. The image is
// distroless, without curl or a shell, and the probe stays out of cairn's
// own command line, where it would be of no use to a person.
//
//	cairn-healthcheck [URL]   (default http://127.0.0.1:7400/readyz)
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	url := "http://127.0.0.1:7400/readyz"
	if len(os.Args) > 1 {
		url = os.Args[1]
	}
	if err := probe(url, 3*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-healthcheck:", err)
		os.Exit(1)
	}
}

// probe returns nil when url answers 200 within timeout.
func probe(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}
