package authapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// refreshToken returns the refresh token of a request: the cookie (which
// then needs the origin check), else the body's refresh_token.
func (a *authAPI) refreshToken(r *http.Request) (string, error) {
	if tok := base.CookieValue(r, refreshCookie); tok != "" {
		return tok, a.origins.Check(r)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAuthBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return "", errs.New(errs.KindTooLarge, "body larger than %d bytes", maxAuthBody)
	}
	if err != nil {
		return "", errs.New(errs.KindInvalid, "cannot read the body")
	}
	if strings.TrimSpace(string(raw)) == "" {
		return "", nil
	}
	var b refreshBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return "", errs.New(errs.KindInvalid, "body must be {\"refresh_token\": \"...\"}")
	}
	return b.RefreshToken, nil
}

// presentedRefresh is the request of ctx and the refresh token it
// presents (cookie or body; "" for none).
func (a *authAPI) presentedRefresh(ctx context.Context) (*http.Request, string, error) {
	r, err := base.RequestOf(ctx)
	if err != nil {
		return nil, "", err
	}
	tok, err := a.refreshToken(r)
	return r, tok, err
}

// refresh rotates the refresh token and issues a new access token.
func (a *authAPI) refresh(ctx context.Context, _ *struct{}) (*sessionOutput, error) {
	r, tok, err := a.presentedRefresh(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	s, err := a.d.Sessions.Refresh(ctx, tok, meta(r))
	if err != nil {
		if errs.KindOf(err) == errs.KindUnauthorized {
			return nil, a.authError(ctx, err, a.d.Cookies.clearedSession()...)
		}
		return nil, a.authError(ctx, err)
	}
	return &sessionOutput{SetCookie: a.d.Cookies.session(s, s.Access.IssuedAt), Body: sessionBody(s, false)}, nil
}

// logout revokes the refresh family and the access token, if any are
// presented and alive, and clears the cookies. It always succeeds for
// dead or missing tokens: logging out twice is fine; only credentials
// refused outright (a malformed Authorization header, a cookie from a
// foreign origin) fail it.
func (a *authAPI) logout(ctx context.Context, _ *struct{}) (*logoutOutput, error) {
	r, tok, err := a.presentedRefresh(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	var claims *auth.Claims
	switch id := base.IdentityOf(ctx); {
	case id.Refused:
		return nil, a.authError(ctx, id.Err)
	case id.Err == nil:
		claims = &id.Claims
	}
	if err := a.d.Sessions.Logout(ctx, claims, tok, meta(r)); err != nil {
		return nil, a.authError(ctx, err)
	}
	return &logoutOutput{SetCookie: a.d.Cookies.clearedSession(), Body: LogoutResponse{LoggedOut: true}}, nil
}
