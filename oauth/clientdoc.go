package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cairnkg/cairn/controlplane"
)

// Client ID metadata documents (MCP authorization, 2025-11-25): a client
// may use as its client_id the https URL of a JSON document that
// describes it, instead of registering. Cairn fetches the document when an
// authorization starts, so that the consent page shows what the document
// says now, and keeps it for the token endpoint.

// maxClientDocumentBytes bounds a client's metadata document.
const maxClientDocumentBytes = 16 << 10

// clientDocument is a client ID metadata document.
type clientDocument struct {
	oauthex.ClientRegistrationMetadata
	ClientID string `json:"client_id"`
}

// isClientDocumentURL reports whether a client_id is the URL of a metadata
// document: https, with a path, without credentials or fragment.
func isClientDocumentURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.User == nil && u.Fragment == ""
}

// publicDocumentClient fetches metadata documents from public addresses
// only: a client_id must not make Cairn reach into its own network
// (loopback, private, link-local addresses are refused at connection,
// after resolution, so a name that resolves to one is refused too), and
// redirects are not followed.
func publicDocumentClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			return fmt.Errorf("oauth: client metadata document at a non-public address %s", host)
		}
		return nil
	}}
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{DialContext: dialer.DialContext, TLSHandshakeTimeout: 5 * time.Second, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

var errClientDocument = errors.New("client metadata document refused")

// fetchClientDocument fetches, checks and records the metadata document a
// client_id names.
func (s *Server) fetchClientDocument(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", errClientDocument, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.docClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errClientDocument, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered %d", errClientDocument, id, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClientDocumentBytes+1))
	if err != nil || len(body) > maxClientDocumentBytes {
		return fmt.Errorf("%w: unreadable or larger than %d bytes", errClientDocument, maxClientDocumentBytes)
	}
	var doc clientDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("%w: not a JSON object of client metadata", errClientDocument)
	}
	if doc.ClientID != id {
		return fmt.Errorf("%w: its client_id %q is not its URL", errClientDocument, doc.ClientID)
	}
	// A document cannot carry a secret: the client is public (PKCE
	// binds its codes), whatever method it names besides none.
	if m := doc.TokenEndpointAuthMethod; m != "" && m != "none" {
		return fmt.Errorf("%w: token_endpoint_auth_method %q; only none is supported for metadata documents", errClientDocument, m)
	}
	doc.TokenEndpointAuthMethod = "none"
	if code, msg := checkRegistration(&doc.ClientRegistrationMetadata); code != "" {
		return fmt.Errorf("%w: %s", errClientDocument, msg)
	}
	meta, _ := json.Marshal(doc.ClientRegistrationMetadata)
	return s.opts.Store.PutOAuthClientDocument(ctx, controlplane.OAuthClient{ID: id, Name: doc.ClientName, Metadata: meta,
		Remote: req.URL.Host})
}
