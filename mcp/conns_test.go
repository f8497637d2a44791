package mcp_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cairnkg/cairn/mcp"
)

// TestLimitConnsPerClient opens one connection more than the limit: the
// server closes it, keeps serving the others, and takes a new connection
// once one of them is closed.
func TestLimitConnsPerClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = srv.Serve(mcp.LimitConnsPerClient(ln, 3, nil)) }()
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	// get sends a request on conn and reports whether it was answered.
	get := func(conn net.Conn) bool {
		_ = conn.SetDeadline(time.Now().Add(patience))
		if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNoContent
	}
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	var open []net.Conn
	for i := range 3 {
		conn := dial()
		if !get(conn) {
			t.Fatalf("connection %d within the limit was not served", i+1)
		}
		open = append(open, conn)
	}
	if get(dial()) {
		t.Fatal("the connection over the limit was served")
	}
	for i, conn := range open {
		if !get(conn) {
			t.Errorf("connection %d stopped being served after the refusal", i+1)
		}
	}

	// The server sees the close asynchronously: retry until the slot is free.
	open[0].Close()
	deadline := time.Now().Add(patience)
	for !get(dial()) {
		if time.Now().After(deadline) {
			t.Fatal("closing a connection did not free its slot")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLimitConnsPerClientUnlimited(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := mcp.LimitConnsPerClient(ln, 0, nil); got != ln {
		t.Error("a limit of 0 wrapped the listener")
	}
}
