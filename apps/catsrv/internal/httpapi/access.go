package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// authorizationKey carries the Authorization header from the middleware to
// the handlers. The header is not an input field of the operations: it
// would appear in the OpenAPI document as a parameter beside the bearer
// security scheme that already describes it.
type authorizationKey struct{}

// captureAuthorization passes the Authorization header to the handler.
func captureAuthorization(ctx huma.Context, next func(huma.Context)) {
	next(huma.WithValue(ctx, authorizationKey{}, ctx.Header("Authorization")))
}

// requireAdmin checks that the request carries a valid admin token.
func (s *server) requireAdmin(ctx context.Context) error {
	if s.tokens == nil {
		return errs.New(errs.KindUnauthorized, "token authentication is not configured on this server")
	}
	header, _ := ctx.Value(authorizationKey{}).(string)
	claims, err := s.tokens.VerifyBearer(header)
	if err != nil {
		return err
	}
	return auth.RequireAdmin(claims)
}
