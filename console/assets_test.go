package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/console"
)

func get(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), method, path, nil))
	res := w.Result()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func TestAssetsHeaders(t *testing.T) {
	t.Parallel()
	h := console.Assets()
	for _, path := range []string{"/console/", "/console/graph", "/console/no/such/file.js"} {
		res, body := get(t, h, "GET", path)
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if got := res.Header.Get("Content-Security-Policy"); got != console.ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
		for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if res.Header.Get(h) == "" {
				t.Errorf("GET %s: no %s", path, h)
			}
		}
		if !strings.Contains(body, "<html") {
			t.Errorf("GET %s: not a page: %.200s", path, body)
		}
	}
	if res, _ := get(t, h, "POST", "/console/"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/: %d, want 405", res.StatusCode)
	}
	for _, d := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(console.ContentSecurityPolicy, d) {
			t.Errorf("the policy lacks %s", d)
		}
	}
	if strings.Contains(console.ContentSecurityPolicy, "unsafe-") {
		t.Errorf("the policy allows something unsafe: %s", console.ContentSecurityPolicy)
	}
}

// The page must work under the policy: no inline script or style, and
// nothing from another origin.
func TestPageFitsThePolicy(t *testing.T) {
	t.Parallel()
	_, body := get(t, console.Assets(), "GET", "/console/")
	if !console.Built() {
		// A binary built without the front end says how to build it.
		if !strings.Contains(body, "scripts/build-console.sh") {
			t.Errorf("the placeholder does not say how to build the console: %s", body)
		}
		t.Log("the front end is not built (scripts/build-console.sh); checked the placeholder page")
		return
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script with a body
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`(?:src|href)="(?:https?:)?//`),
	} {
		if m := re.FindString(body); m != "" {
			t.Errorf("index.html has %q, which the policy refuses or which leaves the origin", m)
		}
	}
	scripts := regexp.MustCompile(`<script[^>]*\ssrc="(/console/assets/[^"]+\.js)"`).FindAllStringSubmatch(body, -1)
	if len(scripts) == 0 {
		t.Fatalf("index.html loads no script from /console/assets/: %s", body)
	}
	for _, s := range scripts {
		res, js := get(t, console.Assets(), "GET", s[1])
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s: %d %s %s", s[1], res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
		}
		// No eval-like code paths that the policy would refuse at run time.
		if strings.Contains(js, "new Function(") {
			t.Errorf("%s calls new Function, which script-src 'self' refuses", s[1])
		}
	}
}
