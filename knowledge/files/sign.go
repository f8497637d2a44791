package files

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/cairnkg/cairn/knowledge"
)

// SignedURL is a time-limited URL to a file's bytes.
type SignedURL struct {
	URL       string
	ExpiresAt time.Time
	FileID    string
}

// SignURL returns a URL to one of the caller's files that works until ttl
// from now (0 means DefaultURLTTL; more than MaxURLTTL is cut to it). The
// caller needs read access to sources. With a BaseURL the URL is served by
// Cairn (BaseURL/files/{id}?u=…&exp=…&sig=…, an HMAC-SHA256 under the
// store's secret); otherwise it is the bucket's own signed URL, and
// ErrNoSigning if the bucket has none.
func (s *Service) SignURL(ctx context.Context, c knowledge.Caller, id string, ttl time.Duration) (SignedURL, error) {
	f, err := s.File(ctx, c, id)
	if err != nil {
		return SignedURL{}, err
	}
	if ttl <= 0 {
		ttl = DefaultURLTTL
	}
	ttl = min(ttl, MaxURLTTL)
	exp := s.now().Add(ttl).Truncate(time.Second).UTC()
	if s.baseURL == "" {
		u, err := s.bucket.SignedURL(ctx, f.BlobKey, &blob.SignedURLOptions{Expiry: ttl, Method: "GET"})
		if err != nil {
			if gcerrors.Code(err) == gcerrors.Unimplemented {
				return SignedURL{}, fmt.Errorf("files: %w: no HTTP server to serve it and the bucket cannot sign URLs", ErrNoSigning)
			}
			return SignedURL{}, fmt.Errorf("files: sign: %w", err)
		}
		return SignedURL{URL: u, ExpiresAt: exp, FileID: f.ID}, nil
	}
	secret, err := s.meta.SigningSecret(ctx)
	if err != nil {
		return SignedURL{}, err
	}
	q := url.Values{}
	q.Set("u", f.UserID)
	q.Set("exp", strconv.FormatInt(exp.Unix(), 10))
	q.Set("sig", signature(secret, f.UserID, f.ID, exp.Unix()))
	return SignedURL{
		URL:       strings.TrimSuffix(s.baseURL, "/") + "/files/" + url.PathEscape(f.ID) + "?" + q.Encode(),
		ExpiresAt: exp, FileID: f.ID,
	}, nil
}

// VerifyURL checks the query of a URL SignURL made for file id and returns
// the file. Anything wrong (expired, altered, unknown) is ErrBadSignature;
// the signature is compared in constant time.
func (s *Service) VerifyURL(ctx context.Context, id string, q url.Values) (File, error) {
	userID, expText, sig := q.Get("u"), q.Get("exp"), q.Get("sig")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || userID == "" || sig == "" {
		return File{}, ErrBadSignature
	}
	secret, err := s.meta.SigningSecret(ctx)
	if err != nil {
		return File{}, err
	}
	if !hmac.Equal([]byte(sig), []byte(signature(secret, userID, id, exp))) {
		return File{}, ErrBadSignature
	}
	if s.now().Unix() >= exp {
		return File{}, ErrBadSignature
	}
	f, err := s.storedFile(ctx, userID, id)
	if errors.Is(err, ErrFileNotFound) {
		return File{}, err
	}
	return f, err
}

func signature(secret []byte, userID, id string, exp int64) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "cairn-file-url-v1\n%s\n%s\n%d", userID, id, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
