package neo4j

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var testConfig = Config{URI: "bolt://graph.example:7687", User: "neo4j", Password: "s3cret-pass", Database: "neo4j"}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want StartupKind
		says string
	}{
		{"unauthorized", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized", Msg: "The client is unauthorized due to authentication failure."}, BadCredentials, "refused the user and password"},
		{"rate limited", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.AuthenticationRateLimit", Msg: "too many attempts"}, BadCredentials, "refused"},
		{"credentials expired", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.CredentialsExpired", Msg: "change the password"}, BadCredentials, "refused"},
		{"token expired", &neo4j.TokenExpiredError{Code: "Neo.ClientError.Security.TokenExpired", Message: "expired"}, BadCredentials, "refused"},
		{"unknown database", &neo4j.Neo4jError{Code: "Neo.ClientError.Database.DatabaseNotFound", Msg: "Database does not exist. Database name: 'graph'."}, UnknownDatabase, `has no database "neo4j"`},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable", Msg: "stopped"}, Unreachable, "cannot reach"},
		{"wrapped", fmt.Errorf("verify: %w", &neo4j.Neo4jError{Code: "Neo.ClientError.Database.DatabaseNotFound"}), UnknownDatabase, "has no database"},
		{"refused", &neo4j.ConnectivityError{Inner: errors.New("dial tcp 10.0.0.1:7687: connect: connection refused")}, Unreachable, "connection refused"},
		{"net error", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}, Unreachable, "no route to host"},
		{"no Bolt version", &neo4j.ConnectivityError{Inner: errors.New("server did not accept any of the requested Bolt versions ([]bolt.protocolVersion{...})")}, TooOld, "older than Neo4j 5"},
		{"unsupported version", &neo4j.UsageError{Message: "server responded with unsupported version 3.0"}, TooOld, "older than Neo4j 5"},
		{"other Neo4j error", &neo4j.Neo4jError{Code: "Neo.DatabaseError.General.UnknownError", Msg: "boom"}, Other, "boom"},
		{"other", errors.New("something\nelse on a second line"), Other, "something"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify(tt.err, testConfig)
			var se *StartupError
			if !errors.As(err, &se) {
				t.Fatalf("classify = %T, want *StartupError", err)
			}
			if se.Kind != tt.want {
				t.Errorf("kind = %d, want %d (%v)", se.Kind, tt.want, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.says) {
				t.Errorf("message %q does not say %q", msg, tt.says)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, testConfig.Password) {
				t.Errorf("message %q is not one line without the password", msg)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the startup error does not wrap the driver's")
			}
		})
	}
	tooOld := &StartupError{Kind: TooOld, URI: "bolt://old:7687", Version: "4.4.30"}
	if got := tooOld.Error(); got != "neo4j: bolt://old:7687 runs Neo4j 4.4.30; Cairn needs Neo4j 5 or newer" {
		t.Errorf("too old: %q", got)
	}
}

func TestAtLeast5(t *testing.T) {
	for v, want := range map[string]bool{"5.0.0": true, "5.26.12": true, "2025.01.0": true, "4.4.30": false, "3.5.35": false, "": false, "dev": false} {
		if got := atLeast5(v); got != want {
			t.Errorf("atLeast5(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"bolt", Config{URI: "bolt://localhost:7687", User: "neo4j", Password: "p"}, ""},
		{"routing TLS", Config{URI: "neo4j+s://x.databases.neo4j.io", User: "neo4j", Password: "p", Database: "graph-1"}, ""},
		{"empty URI", Config{User: "neo4j", Password: "p"}, "not a URL"},
		{"http", Config{URI: "http://localhost:7474", User: "neo4j", Password: "p"}, `scheme "http"`},
		{"no host", Config{URI: "bolt://", User: "neo4j", Password: "p"}, "no host"},
		{"credentials in URI", Config{URI: "bolt://neo4j:p@localhost:7687", User: "neo4j", Password: "p"}, "not in the URI"},
		{"no user", Config{URI: "bolt://localhost:7687", Password: "p"}, "user"},
		{"no password", Config{URI: "bolt://localhost:7687", User: "neo4j"}, "password"},
		{"bad database", Config{URI: "bolt://localhost:7687", User: "neo4j", Password: "p", Database: "My_DB"}, "database name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			err := cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Database == "" {
					t.Error("Validate left the database empty")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error saying %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), ":p@") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestConnectUnreachable connects the real driver to a port nothing
// listens on.
func TestConnectUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = Connect(ctx, Config{URI: "bolt://" + addr, User: "neo4j", Password: "p"})
	var se *StartupError
	if !errors.As(err, &se) || se.Kind != Unreachable {
		t.Fatalf("Connect = %v, want an Unreachable startup error", err)
	}
	t.Log(err)
}

// TestConnectTooOld connects the real driver to a server that, like Neo4j
// before 4.4, accepts none of the Bolt versions the driver offers.
func TestConnectTooOld(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handshake := make([]byte, 20) // magic and four versions
				if _, err := io.ReadFull(conn, handshake); err != nil {
					return
				}
				_, _ = conn.Write([]byte{0, 0, 0, 0}) // none of them
			}()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = Connect(ctx, Config{URI: "bolt://" + ln.Addr().String(), User: "neo4j", Password: "p"})
	var se *StartupError
	if !errors.As(err, &se) || se.Kind != TooOld {
		t.Fatalf("Connect = %v, want a TooOld startup error", err)
	}
	t.Log(err)
}
