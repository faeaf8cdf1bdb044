package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/auth_moq.go . UserStore UserEraser RefreshTokenStore RefreshTokenEraser Revocations AuditLog MemoryStore IdentityProvider

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/auth"
)

// UserStore keeps catsrv accounts.
type UserStore interface {
	// UpsertUser creates the account of an identity, or refreshes the email
	// and name of the existing one with the same (provider, subject). The
	// id, role and creation time of an existing account never change; a new
	// one gets role auth.RoleUser. at is the time of the change.
	UpsertUser(ctx context.Context, id auth.Identity, at time.Time) (auth.User, error)
	// User returns an account by id, or errs.KindNotFound.
	User(ctx context.Context, id string) (auth.User, error)
}

// UserEraser finds accounts by identity and deletes them: the account part
// of erasing a person.
type UserEraser interface {
	// UserByIdentity returns the account of (provider, subject), or
	// errs.KindNotFound.
	UserByIdentity(ctx context.Context, provider, subject string) (auth.User, error)
	// DeleteUser deletes the account with this id and reports whether
	// there was one; deleting none is no error.
	DeleteUser(ctx context.Context, id string) (bool, error)
}

// RefreshTokenStore keeps the hashes of refresh tokens.
type RefreshTokenStore interface {
	// SaveRefresh stores a new token; a hash already stored is
	// errs.KindConflict.
	SaveRefresh(ctx context.Context, t auth.RefreshToken) error
	// ConsumeRefresh marks the token with this hash used at `at`, if it is
	// neither used nor revoked, and returns it with fresh true. A token
	// already used or revoked is returned unchanged with fresh false, so
	// the caller can tell reuse from a first use; two concurrent calls for
	// one hash never both get fresh true. An unknown hash is
	// errs.KindNotFound.
	ConsumeRefresh(ctx context.Context, hash string, at time.Time) (t auth.RefreshToken, fresh bool, err error)
	// RefreshToken returns the token with this hash, or errs.KindNotFound.
	RefreshToken(ctx context.Context, hash string) (auth.RefreshToken, error)
	// RevokeFamily marks every token of the family revoked at `at` (tokens
	// already revoked keep their time). Revoking an unknown family is not
	// an error.
	RevokeFamily(ctx context.Context, family string, at time.Time) error
}

// RefreshTokenEraser deletes the refresh tokens of a user.
type RefreshTokenEraser interface {
	// DeleteRefreshTokens deletes every refresh token of the user, used,
	// revoked or live, and returns them as they were stored, so that the
	// caller can deny their sessions' access tokens; a deleted token is
	// unknown to ConsumeRefresh from then on.
	DeleteRefreshTokens(ctx context.Context, userID string) ([]auth.RefreshToken, error)
}

// Revocations is a deny list of identifiers (access token ids, used login
// states) that matter only until they expire on their own. Entries past
// their time may be forgotten, so the list never grows without bound.
type Revocations interface {
	// Revoke denies id until `until`. It reports whether id was not denied
	// before (first is true for exactly one of concurrent callers); denying
	// it again does not extend the time. now lets the store forget entries
	// that expired before it.
	Revoke(ctx context.Context, id string, until, now time.Time) (first bool, err error)
	// Revoked reports whether id is denied at `at`.
	Revoked(ctx context.Context, id string, at time.Time) (bool, error)
}

// AuditLog records authentication events.
type AuditLog interface {
	// Record appends an event.
	Record(ctx context.Context, e auth.AuditEvent) error
	// Events returns the events the filter selects, oldest first (events
	// of the same time in the order recorded).
	Events(ctx context.Context, f auth.AuditFilter) ([]auth.AuditEvent, error)
	// Prune deletes every event older than before (events at before are
	// kept) and returns how many it deleted. It deletes at most batch
	// events per statement (batch <= 0: a store default), each batch
	// committed on its own, so that a large log never holds a long lock;
	// it repeats until none is left or ctx ends.
	Prune(ctx context.Context, before time.Time, batch int) (int, error)
}

// MemoryStore keeps each user's memory (spec §2.5).
type MemoryStore interface {
	// Memory returns the user's memory: empty preferences and a zero
	// UpdatedAt when there is none.
	Memory(ctx context.Context, userID string) (auth.Memory, error)
	// UpdateMemory replaces the user's memory by change(current) as one
	// atomic step: concurrent updates of one user are serialized, none is
	// lost. If change fails nothing is stored and its error is returned.
	UpdateMemory(ctx context.Context, userID string, change func(auth.Memory) (auth.Memory, error)) (auth.Memory, error)
	// DeleteMemory removes the user's memory; removing none is no error.
	DeleteMemory(ctx context.Context, userID string) error
}

// IdentityProvider is one external login provider.
type IdentityProvider interface {
	// AuthURL returns the URL the browser is sent to for the login.
	// verifier is the PKCE code verifier, nonce the value an OpenID Connect
	// ID token must carry; providers without PKCE or ID tokens ignore them.
	AuthURL(ctx context.Context, state, verifier, nonce string) (string, error)
	// Exchange trades the code of the callback for the user's identity,
	// fetched from the provider's user endpoint or read from an ID token
	// whose signature, issuer, audience, times and nonce were verified
	// (never from an unverified one). A refused code or ID token is
	// errs.KindUnauthorized; an unreachable provider errs.KindUnavailable.
	Exchange(ctx context.Context, code, verifier, nonce string) (auth.Identity, error)
}
