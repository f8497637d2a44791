package mcp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultReadTimeout bounds how long a request body may take to arrive.
const DefaultReadTimeout = 30 * time.Second

// CodeRequestTimeout is the error code of a request whose body did not
// arrive within the read timeout (HTTP 408).
const CodeRequestTimeout = "REQUEST_TIMEOUT"

// guardHTTP is the outermost layer of the HTTP surface, applied to every
// route before routing: it bounds the time a request body may take, refuses
// a Host that is not loopback on a loopback listener and a browser Origin
// that is not allowed, and answers CORS. Refusals go out at once in the
// route's error shape.
func (s *Server) guardHTTP(opts HTTPOptions, next http.Handler) http.Handler {
	chains := map[errorShape]http.Handler{}
	for _, shape := range []errorShape{mcpShape, restShape} {
		chains[shape] = s.checkHost(shape, s.checkOrigin(opts.AllowedOrigins, shape, cors(next)))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shape := shapeOf(r.URL.Path)
		gw, r := guardBody(w, r, opts.ReadTimeout, shape)
		chains[shape].ServeHTTP(gw, r)
		g, ok := gw.(*guardedWriter)
		if !ok {
			return
		}
		if !g.wroteHeader && g.body.timedOut.Load() {
			g.WriteHeader(http.StatusRequestTimeout) // answered as 408 whatever the status
		}
		if g.refused {
			// Connection: close stops net/http from draining the body
			// before it answers, but not from reading up to 256 KB of it
			// when it closes the body after the handler: a body of a
			// declared 100 KB that never comes would hold the connection
			// until the read deadline. An expired deadline makes that
			// read fail at once, and the connection closes.
			_ = g.body.rc.SetReadDeadline(time.Now())
		}
	})
}

// shapeOf chooses the error shape of a path: the REST facade's under /mcp/,
// MCP's envelope elsewhere.
func shapeOf(path string) errorShape {
	if strings.HasPrefix(path, "/mcp/") {
		return restShape
	}
	return mcpShape
}

// checkHost answers 403 to a request that reached a loopback listener with a
// Host header that is not loopback: a web page that rebinds its own name to
// 127.0.0.1 still sends its own name as Host. It is the rule the SDK applies
// to /mcp (StreamableHTTPOptions.DisableLocalhostProtection), for every route.
func (s *Server) checkHost(shape errorShape, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			isLoopback(local.String()) && !isLoopback(r.Host) {
			e := newError(http.StatusForbidden, CodeForbidden, "host "+truncateText(r.Host, 128)+" is not allowed on a loopback address; use localhost or 127.0.0.1", nil)
			sendError(w, e, shape)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a host or host:port names a loopback address
// ("localhost" included), as the SDK decides it.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// guardBody sets the read deadline of a request with a body and wraps the
// body and the writer so that:
//
//   - the deadline is cleared once the body has been read, so that a long
//     answer (an SSE stream) is not cut by it (net/http clears it too when
//     it starts watching the connection for a hang-up, but only when its
//     own body reaches EOF);
//   - an error answer written before the body was read closes the
//     connection at once instead of making net/http read (up to 256 KB
//     of) a body the client may be trickling or never send;
//   - a body that misses the deadline is answered 408 REQUEST_TIMEOUT,
//     whatever the handler that saw the read error wrote, and the
//     connection is closed.
//
// A timeout of 0 means DefaultReadTimeout, a negative one none.
func guardBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, shape errorShape) (http.ResponseWriter, *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return w, r
	}
	if timeout == 0 {
		timeout = DefaultReadTimeout
	}
	body := &guardedBody{ReadCloser: r.Body, rc: http.NewResponseController(w)}
	if timeout > 0 {
		// The error is ErrNotSupported under a writer that cannot set
		// deadlines (a test recorder); the body is then merely unbounded.
		if body.rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
			body.deadline = true
		}
	}
	r.Body = body
	return &guardedWriter{ResponseWriter: w, body: body, shape: shape}, r
}

// guardedBody records how reading a request body ended.
type guardedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	deadline bool        // a read deadline is set and not yet cleared
	done     atomic.Bool // read to EOF
	timedOut atomic.Bool // missed the read deadline
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		if b.done.CompareAndSwap(false, true) && b.deadline {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.timedOut.Store(true)
	}
	return n, err
}

// guardedWriter is the writer guardBody hands on. It supports Flush and
// Unwrap, so http.ResponseController and the SDK's streaming work through it.
type guardedWriter struct {
	http.ResponseWriter
	body        *guardedBody
	shape       errorShape
	wroteHeader bool
	discard     bool // the handler's answer was replaced by the 408
	// refused: an error was answered before the body was read, and the
	// connection closes after it without reading the rest.
	refused bool
}

func (w *guardedWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	if status < 200 {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.wroteHeader = true
	if w.body.timedOut.Load() {
		w.discard, w.refused = true, true
		w.Header().Set("Connection", "close")
		sendError(w.ResponseWriter, newError(http.StatusRequestTimeout, CodeRequestTimeout,
			"the request body did not arrive within the server's read timeout", nil), w.shape)
		return
	}
	if status >= 400 && !w.body.done.Load() {
		// Checked by net/http before it would read the rest of the body.
		w.Header().Set("Connection", "close")
		w.refused = true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.discard {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// FlushError flushes the answer; http.ResponseController calls it.
func (w *guardedWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.discard {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher for handlers (gin) that assert it.
func (w *guardedWriter) Flush() { _ = w.FlushError() }

// Unwrap gives http.ResponseController the writer underneath.
func (w *guardedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
