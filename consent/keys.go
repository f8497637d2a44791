package consent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// KeyPrefix starts every key Cairn generates, so that a leaked key is easy to
// recognise (and to scan for).
const KeyPrefix = "cairn_sk_"

// Key length limits. Keys Cairn generates are 52 characters; a key supplied
// through CAIRN_OWNER_KEY may be any printable string in these bounds.
const (
	MinKeyLen = 32
	MaxKeyLen = 512
)

// Authentication failures, each with its own message so that a client can
// tell what to fix.
var (
	ErrMissingKey   = errors.New("API key required: send Authorization: Bearer <key> or X-API-Key: <key>")
	ErrMalformedKey = errors.New("invalid API key format")
	ErrUnknownKey   = errors.New("unknown API key")
	ErrRevokedKey   = errors.New("API key has been revoked")
	ErrExpiredKey   = errors.New("API key has expired")
)

// Key is an API key's record. The key itself is never stored, only its hash.
type Key struct {
	ID         string
	UserID     string
	AgentID    string
	AgentName  string
	Prefix     string // the first characters, to recognise a key in listings
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	RevokedAt  time.Time // zero: not revoked
	LastUsedAt time.Time // zero: never used
}

// NewKey returns a fresh random key: KeyPrefix and 43 base62 characters
// (about 256 bits), letters and digits only so that a double-click selects it.
func NewKey() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const n = 43
	var sb strings.Builder
	sb.WriteString(KeyPrefix)
	buf := make([]byte, 64)
	for sb.Len() < len(KeyPrefix)+n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("consent: generate key: %w", err)
		}
		for _, c := range buf {
			// Rejection sampling keeps every symbol equally likely.
			if c < 248 && sb.Len() < len(KeyPrefix)+n {
				sb.WriteByte(alphabet[c%62])
			}
		}
	}
	return sb.String(), nil
}

// HashKey returns the hex SHA-256 under which a key is stored. Keys carry
// 256 bits of entropy (or at least 32 characters when supplied), so an
// unsalted fast hash is enough and lets a key be found by its hash.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// DisplayPrefix returns the part of a key shown in listings.
func DisplayPrefix(key string) string {
	n := len(KeyPrefix) + 4
	if !strings.HasPrefix(key, KeyPrefix) {
		n = 6
	}
	return key[:min(n, len(key))]
}

// CheckKeyFormat reports whether s can be a key: MinKeyLen..MaxKeyLen
// printable ASCII characters without spaces.
func CheckKeyFormat(s string) error {
	if len(s) < MinKeyLen || len(s) > MaxKeyLen {
		return ErrMalformedKey
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return ErrMalformedKey
		}
	}
	return nil
}

// KeyFromHeaders extracts the key from an HTTP request: Authorization:
// Bearer <key>, or else X-API-Key: <key>. It returns ErrMissingKey when
// neither is present and ErrMalformedKey for another scheme or a value that
// cannot be a key.
func KeyFromHeaders(h http.Header) (string, error) {
	if auth := h.Get("Authorization"); auth != "" {
		scheme, key, ok := strings.Cut(strings.TrimSpace(auth), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", ErrMalformedKey
		}
		key = strings.TrimSpace(key)
		return key, CheckKeyFormat(key)
	}
	if key := strings.TrimSpace(h.Get("X-API-Key")); key != "" {
		return key, CheckKeyFormat(key)
	}
	return "", ErrMissingKey
}

// KeyStore is what authentication needs from the control plane.
type KeyStore interface {
	// KeyByHash returns the key with this hash and the principal it stands
	// for, or an error wrapping ErrUnknownKey.
	KeyByHash(ctx context.Context, hash string) (Key, Principal, error)
	// TouchKey records that a key was used at a time.
	TouchKey(ctx context.Context, keyID string, at time.Time) error
}

// Authenticator turns keys into principals.
type Authenticator struct {
	store KeyStore
	now   func() time.Time

	mu      sync.Mutex
	touched map[string]time.Time // last recorded use, to write at most once a minute
}

// NewAuthenticator returns an authenticator over a key store; now is the
// clock (nil: time.Now).
func NewAuthenticator(store KeyStore, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{store: store, now: now, touched: map[string]time.Time{}}
}

// touchInterval is how stale last_used_at may get: recording every request
// would turn every read into a write.
const touchInterval = time.Minute

// Authenticate returns the principal of a key, or one of ErrMalformedKey,
// ErrUnknownKey, ErrRevokedKey, ErrExpiredKey (possibly wrapped).
func (a *Authenticator) Authenticate(ctx context.Context, key string) (Principal, error) {
	if err := CheckKeyFormat(key); err != nil {
		return Principal{}, err
	}
	k, p, err := a.store.KeyByHash(ctx, HashKey(key))
	if err != nil {
		return Principal{}, err
	}
	now := a.now()
	if !k.RevokedAt.IsZero() {
		return Principal{}, ErrRevokedKey
	}
	if !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) {
		return Principal{}, fmt.Errorf("%w (at %s)", ErrExpiredKey, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	a.mu.Lock()
	last, seen := a.touched[k.ID]
	due := !seen || now.Sub(last) >= touchInterval
	if due {
		a.touched[k.ID] = now
	}
	a.mu.Unlock()
	if due {
		if err := a.store.TouchKey(ctx, k.ID, now); err != nil {
			return Principal{}, fmt.Errorf("consent: record key use: %w", err)
		}
	}
	return p, nil
}
