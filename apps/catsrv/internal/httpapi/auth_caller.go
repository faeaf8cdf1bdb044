package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/errs"
)

// This file is the API's one authenticator: every operation that needs to
// know its caller (analytics, chat, conversations, configuration, the
// memory routes and logout) lists the authenticate middleware, which finds
// the caller and puts the answer in the context; handlers read it with
// callerOf and decide what it means for them (auth.MayReadAnalytics,
// auth.RequireAdmin, a user's own data).

// authenticator finds the caller of a request: a bearer token, else the
// access cookie, whose state-changing requests must pass the origin check
// (CSRF). With a session service, revoked tokens are refused; without one,
// the token service alone verifies.
type authenticator struct {
	sessions *session.Service
	tokens   *tokens.Service
	origins  originPolicy
}

// identity is what the authenticator found.
type identity struct {
	claims auth.Claims
	// err is why there are no claims.
	err error
	// refused: the credentials were refused before any verification (a
	// malformed Authorization header, a cookie from a foreign origin),
	// which even routes that do without a caller answer.
	refused bool
}

type authenticatorKey struct{}

type identityKey struct{}

// withAuthenticator is the API-wide middleware that gives the operations'
// authenticate middleware the authenticator of this API. It only stores a
// pointer: nothing is checked until an operation asks.
func withAuthenticator(a *authenticator) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		next(huma.WithValue(ctx, authenticatorKey{}, a))
	}
}

// authenticate is the middleware of the operations that need their
// caller: it authenticates the request and stores the identity for
// callerOf. It never answers by itself: whether a missing or bad token
// matters is the handler's call (a public CAT's analytics need none).
func authenticate(ctx huma.Context, next func(huma.Context)) {
	a, _ := ctx.Context().Value(authenticatorKey{}).(*authenticator)
	id := identity{err: errs.New(errs.KindInternal, "authenticate runs without the authenticator")}
	if a != nil {
		r, _ := humago.Unwrap(ctx)
		id = a.identify(ctx.Context(), r)
	}
	next(huma.WithValue(ctx, identityKey{}, id))
}

// callerOf returns the claims the authenticate middleware found, or why
// there are none.
func callerOf(ctx context.Context) (auth.Claims, error) {
	id := identityOf(ctx)
	return id.claims, id.err
}

func identityOf(ctx context.Context) identity {
	id, ok := ctx.Value(identityKey{}).(identity)
	if !ok {
		return identity{err: errs.New(errs.KindInternal, "route registered without the authenticate middleware")}
	}
	return id
}

// identify authenticates r.
func (a *authenticator) identify(ctx context.Context, r *http.Request) identity {
	tok, err := bearer(r)
	if err != nil {
		return identity{err: err, refused: true}
	}
	if tok == "" {
		tok = cookieValue(r, accessCookie)
		if tok == "" {
			return identity{err: auth.ErrNoCredentials}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := a.origins.check(r); err != nil {
				return identity{err: err, refused: true}
			}
		}
	}
	c, err := a.verify(ctx, tok)
	return identity{claims: c, err: err}
}

// verify checks a token: with the session service, revocations included.
func (a *authenticator) verify(ctx context.Context, tok string) (auth.Claims, error) {
	switch {
	case a.sessions != nil:
		return a.sessions.Authenticate(ctx, tok)
	case a.tokens != nil:
		return a.tokens.Verify(tok)
	}
	return auth.Claims{}, errs.New(errs.KindUnauthorized, "token authentication is not configured on this server")
}

// bearer returns the token of an Authorization header, "" when there is
// none, and an error when the header is not a bearer token.
func bearer(r *http.Request) (string, error) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return "", nil
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", errs.New(errs.KindUnauthorized, "malformed Authorization header: expected Bearer <token>")
	}
	return strings.TrimSpace(tok), nil
}

// requireAdmin allows only a caller with role admin.
func requireAdmin(ctx context.Context) error {
	who, err := callerOf(ctx)
	if err != nil {
		return err
	}
	return auth.RequireAdmin(who)
}
