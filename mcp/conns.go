package mcp

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// DefaultMaxConnsPerClient is how many connections one remote address may
// hold open at once by default.
const DefaultMaxConnsPerClient = 64

// connWarnEvery is how often a refused address is logged at most.
const connWarnEvery = time.Minute

// LimitConnsPerClient returns a listener that lets each remote IP address
// hold at most max connections open at once: a connection beyond that is
// closed as soon as it is accepted, so one client cannot take every slot
// with connections it never finishes. Accept goes on to the next
// connection; it returns only the errors of ln. max <= 0 returns ln
// unchanged. Behind a reverse proxy every client has the proxy's address:
// raise or disable the limit there.
func LimitConnsPerClient(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &perClientListener{Listener: ln, max: max, log: log, open: map[string]int{}, warned: map[string]time.Time{}}
}

type perClientListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	open   map[string]int       // open connections by remote IP
	warned map[string]time.Time // when a refusal was last logged, by remote IP
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c.RemoteAddr())
		if l.admit(ip) {
			return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		_ = c.Close()
	}
}

// admit counts a new connection from ip, or reports false (and logs, at
// most once a minute per address) when ip is at its limit.
func (l *perClientListener) admit(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] < l.max {
		l.open[ip]++
		return true
	}
	now := time.Now()
	if now.Sub(l.warned[ip]) < connWarnEvery {
		return false
	}
	if len(l.warned) >= 1024 {
		for a, t := range l.warned {
			if now.Sub(t) >= connWarnEvery {
				delete(l.warned, a)
			}
		}
	}
	l.warned[ip] = now
	l.log.Warn("too many connections from one address; closing new ones", "remote", ip, "max_conns_per_client", l.max)
	return false
}

func (l *perClientListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// remoteIP is the IP of a remote address, or the whole address when it has
// no port (a Unix socket).
func remoteIP(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// countedConn gives its slot back when closed, once.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite passes on the half-close net/http uses to let the client read
// an answer before the connection goes (without it, closing with unread
// request bytes resets the connection and the answer may be lost).
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
