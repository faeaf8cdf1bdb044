package httpapi

import (
	"context"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// authorizationKey carries the Authorization header from the middleware to
// the handlers. The header is not an input field of the operations: it
// would appear in the OpenAPI document as a parameter beside the bearer
// security scheme that already describes it.
type authorizationKey struct{}

// accessCookieKey carries the session's access cookie the same way.
type accessCookieKey struct{}

// captureAuthorization passes the Authorization header and the access
// cookie (parsed by cookieValue, like on every other route) to the handler.
func captureAuthorization(ctx huma.Context, next func(huma.Context)) {
	r, _ := humago.Unwrap(ctx)
	ctx = huma.WithValue(ctx, authorizationKey{}, ctx.Header("Authorization"))
	if cookie := cookieValue(r, accessCookie); cookie != "" {
		ctx = huma.WithValue(ctx, accessCookieKey{}, cookie)
	}
	next(ctx)
}

// requireAdmin checks that the request carries a valid admin token.
func (s *server) requireAdmin(ctx context.Context) error {
	if s.tokens == nil {
		return errs.New(errs.KindUnauthorized, "token authentication is not configured on this server")
	}
	header, _ := ctx.Value(authorizationKey{}).(string)
	if cookie, _ := ctx.Value(accessCookieKey{}).(string); header == "" && cookie != "" {
		// Analytics routes only read, so the cookie needs no CSRF check.
		header = "Bearer " + cookie
	}
	claims, err := s.tokens.VerifyBearer(header)
	if err != nil {
		return err
	}
	if s.auth.configured() {
		// Same checks again, plus the revocations of logouts.
		_, token, _ := strings.Cut(strings.TrimSpace(header), " ")
		if claims, err = s.auth.d.Sessions.Authenticate(ctx, strings.TrimSpace(token)); err != nil {
			return err
		}
	}
	return auth.RequireAdmin(claims)
}
