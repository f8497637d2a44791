package mcp

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CORS lets a web page on an allowed origin (loopback, or --allowed-origins)
// call Cairn from the browser. checkOrigin has refused every other origin
// before cors runs, so cors only adds headers: a preflight is answered 204
// without a key (browsers never send credentials on one), and every other
// answer names the origin and exposes the headers an MCP client reads.
//
// It is our own rather than github.com/rs/cors because the rules already
// exist (originAllowed) and a refused origin must get 403 with the error
// envelope, where rs/cors would only leave the headers out.

var (
	corsAllowMethods = strings.Join([]string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodOptions}, ", ")
	corsAllowHeaders = strings.Join([]string{
		"Authorization", "Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version",
		"Last-Event-ID", "X-API-Key", "X-Agent-ID",
	}, ", ")
	corsExposeHeaders = strings.Join([]string{
		"Mcp-Session-Id", "Mcp-Protocol-Version", "X-RateLimit-Limit", "X-RateLimit-Remaining",
		"X-RateLimit-Reset", "Retry-After", "WWW-Authenticate",
	}, ", ")
	// corsMaxAge is how long a browser may cache a preflight answer.
	corsMaxAge = strconv.Itoa(int((2 * time.Hour).Seconds()))
)

// cors adds the CORS headers of an allowed origin and answers preflights.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next.ServeHTTP(w, r)
	})
}
