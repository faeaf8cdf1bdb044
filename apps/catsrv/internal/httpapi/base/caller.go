package base

import (
	"context"
	"encoding/json"
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
// memory routes and logout) lists the Authenticate middleware, which finds
// the caller and puts the answer in the context; handlers read it with
// CallerOf and decide what it means for them (auth.MayReadAnalytics,
// auth.RequireAdmin, a user's own data).

// AccessCookie holds the access token of a session, sent to the whole API.
const AccessCookie = "catsrv_access"

// Authenticator finds the caller of a request: a bearer token, else the
// access cookie, whose state-changing requests must pass the origin check
// (CSRF). With a session service, revoked tokens are refused; without one,
// the token service alone verifies.
type Authenticator struct {
	Sessions *session.Service
	Tokens   *tokens.Service
	Origins  OriginPolicy
}

// Identity is what the authenticator found.
type Identity struct {
	Claims auth.Claims
	// Err is why there are no claims.
	Err error
	// Refused: the credentials were refused before any verification (a
	// malformed Authorization header, a cookie from a foreign origin),
	// which even routes that do without a caller answer.
	Refused bool
}

type authenticatorKey struct{}

type identityKey struct{}

// WithAuthenticator is the API-wide middleware that gives the operations'
// Authenticate middleware the authenticator of this API. It only stores a
// pointer: nothing is checked until an operation asks.
func WithAuthenticator(a *Authenticator) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		next(huma.WithValue(ctx, authenticatorKey{}, a))
	}
}

// IngestsMetadata is the key of Operation.Metadata that marks (true) an
// operation storing interactions: the only kind of operation an ingest
// token may call (auth.MayCall).
const IngestsMetadata = "catsrv-ingests"

// Authenticate is the middleware of the operations that need their
// caller: it authenticates the request and stores the identity for
// CallerOf. Whether a missing or bad token matters is the handler's call
// (a public CAT's analytics need none); the one answer it gives itself is
// 403 to a verified caller whose role may not call the operation at all
// (an ingest token anywhere but where IngestsMetadata is set).
func Authenticate(ctx huma.Context, next func(huma.Context)) {
	a, _ := ctx.Context().Value(authenticatorKey{}).(*Authenticator)
	id := Identity{Err: errs.New(errs.KindInternal, "authenticate runs without the authenticator")}
	if a != nil {
		r, _ := humago.Unwrap(ctx)
		id = a.identify(ctx.Context(), r)
	}
	if id.Err == nil {
		ingests := false
		if op := ctx.Operation(); op != nil {
			ingests, _ = op.Metadata[IngestsMetadata].(bool)
		}
		if err := auth.MayCall(id.Claims, ingests); err != nil {
			writeForbidden(ctx, err)
			return
		}
	}
	next(huma.WithValue(ctx, identityKey{}, id))
}

// writeForbidden answers 403 with the ErrorBody every route family gives
// a forbidden caller.
func writeForbidden(ctx huma.Context, err error) {
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetStatus(http.StatusForbidden)
	body := ErrorBody{Code: "FORBIDDEN", Status: http.StatusForbidden, Message: errs.PublicMessage(err, "forbidden")}
	_ = json.NewEncoder(ctx.BodyWriter()).Encode(body)
}

// CallerOf returns the claims the Authenticate middleware found, or why
// there are none.
func CallerOf(ctx context.Context) (auth.Claims, error) {
	id := IdentityOf(ctx)
	return id.Claims, id.Err
}

// IdentityOf returns what the Authenticate middleware found, refusals
// included.
func IdentityOf(ctx context.Context) Identity {
	id, ok := ctx.Value(identityKey{}).(Identity)
	if !ok {
		return Identity{Err: errs.New(errs.KindInternal, "route registered without the authenticate middleware")}
	}
	return id
}

// identify authenticates r.
func (a *Authenticator) identify(ctx context.Context, r *http.Request) Identity {
	tok, err := bearer(r)
	if err != nil {
		return Identity{Err: err, Refused: true}
	}
	if tok == "" {
		tok = CookieValue(r, AccessCookie)
		if tok == "" {
			return Identity{Err: auth.ErrNoCredentials}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := a.Origins.Check(r); err != nil {
				return Identity{Err: err, Refused: true}
			}
		}
	}
	c, err := a.verify(ctx, tok)
	return Identity{Claims: c, Err: err}
}

// verify checks a token: with the session service, revocations included.
func (a *Authenticator) verify(ctx context.Context, tok string) (auth.Claims, error) {
	switch {
	case a.Sessions != nil:
		return a.Sessions.Authenticate(ctx, tok)
	case a.Tokens != nil:
		return a.Tokens.Verify(tok)
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

// RequireAdmin allows only a caller with role admin.
func RequireAdmin(ctx context.Context) error {
	who, err := CallerOf(ctx)
	if err != nil {
		return err
	}
	return auth.RequireAdmin(who)
}
