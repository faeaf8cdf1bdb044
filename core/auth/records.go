package auth

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// RoleUser is the role of every user who signs in through a provider.
// Admin tokens are minted by operators (catsrv token), never by a login.
const RoleUser = "user"

// The names of the identity providers of spec §4.5, also the path segment
// of their routes.
const (
	ProviderA = "provider_a"
	ProviderB = "provider_b"
	ProviderC = "provider_c"
)

// Providers lists every provider name, in route order.
var Providers = []string{ProviderA, ProviderB, ProviderC}

// Identity is what a provider vouches for after a successful login: who the
// user is at that provider. Subject is the provider's stable user id; email
// and name are informative and may change.
type Identity struct {
	Provider string
	Subject  string
	Email    string
	Name     string
}

// User is a catsrv account: one per (provider, subject).
type User struct {
	ID string
	Identity
	Role      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RefreshToken is the stored form of an opaque refresh token: only its hash
// is kept, so a leaked table cannot be replayed. Tokens of one login share a
// Family and its absolute expiry; rotation marks the old token Used and
// adds a new one to the family.
type RefreshToken struct {
	// Hash is the hex SHA-256 of the token the client holds.
	Hash   string
	Family string
	UserID string
	// Cat is the CAT whose settings the login used (token lifetime).
	Cat             string
	IssuedAt        time.Time
	FamilyExpiresAt time.Time
	// UsedAt is zero while the token may still be rotated.
	UsedAt time.Time
	// RevokedAt is zero unless the family was revoked (logout, reuse).
	RevokedAt time.Time
}

// AuditKind names an authentication event.
type AuditKind string

// The audited events.
const (
	AuditLoginStart       AuditKind = "login_start"
	AuditLoginSuccess     AuditKind = "login_success"
	AuditLoginFailure     AuditKind = "login_failure"
	AuditProviderDisabled AuditKind = "provider_disabled"
	AuditRefresh          AuditKind = "refresh"
	AuditRefreshFailure   AuditKind = "refresh_failure"
	AuditRefreshReuse     AuditKind = "refresh_reuse"
	AuditLogout           AuditKind = "logout"
	// AuditRateLimited is a client address refused for sending too many
	// unauthenticated authentication requests; recorded once per window
	// and address, not per refused request.
	AuditRateLimited AuditKind = "rate_limited"
)

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Time      time.Time
	Kind      AuditKind
	UserID    string
	Provider  string
	Cat       string
	IP        string
	UserAgent string
	// Reason says why a failure failed; empty on success.
	Reason string
}

// Storable returns the event with every text field made storable by any
// back end: bytes that are not UTF-8 and NUL bytes become U+FFFD. Its text
// comes from clients (the User-Agent, a provider's error parameter), and
// an audit line must be written whatever they send.
func (e AuditEvent) Storable() AuditEvent {
	for _, f := range []*string{&e.UserID, &e.Provider, &e.Cat, &e.IP, &e.UserAgent, &e.Reason} {
		*f = StorableText(*f)
	}
	e.Kind = AuditKind(StorableText(string(e.Kind)))
	return e
}

// StorableText replaces the bytes of s that no back end stores faithfully
// (bytes that are not UTF-8, NUL) by U+FFFD; other text is returned as is.
func StorableText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// AuditFilter selects audit events: those at or after Since (zero: all) of
// UserID (empty: anyone), oldest first, at most Limit (0: no limit).
type AuditFilter struct {
	Since  time.Time
	UserID string
	Limit  int
}

// Matches reports whether an event passes the filter (the reference the
// stores must agree with).
func (f AuditFilter) Matches(e AuditEvent) bool {
	return !e.Time.Before(f.Since) && (f.UserID == "" || e.UserID == f.UserID)
}

// Memory is a user's stored preferences. Values are free-form JSON, kept
// compact; UpdatedAt is zero when the user has none.
type Memory struct {
	Preferences map[string]json.RawMessage
	UpdatedAt   time.Time
}

// RequestMeta is what the audit log records about the request that caused
// an event.
type RequestMeta struct {
	IP        string
	UserAgent string
}
