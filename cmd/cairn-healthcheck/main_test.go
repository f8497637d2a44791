package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	if err := probe(srv.URL+"/readyz", time.Second); err != nil {
		t.Fatalf("ready: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := probe(srv.URL+"/readyz", time.Second); err == nil {
		t.Fatal("not ready, but the probe passed")
	}
	srv.Close()
	if err := probe(srv.URL+"/readyz", time.Second); err == nil {
		t.Fatal("nothing listening, but the probe passed")
	}
}
