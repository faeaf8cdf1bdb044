package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// refreshBody is the optional body of refresh and logout, for clients that
// hold the refresh token themselves instead of the cookie.
type refreshBody struct {
	RefreshToken string `json:"refresh_token"`
}

// refreshToken returns the refresh token of a request: the cookie (which
// then needs the origin check), else the body's refresh_token.
func (a *authAPI) refreshToken(r *http.Request) (string, error) {
	if tok := cookieValue(r, refreshCookie); tok != "" {
		return tok, a.checkOrigin(r)
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

// refresh rotates the refresh token and issues a new access token.
func (a *authAPI) refresh(w http.ResponseWriter, r *http.Request) {
	tok, err := a.refreshToken(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	s, err := a.d.Sessions.Refresh(r.Context(), tok, meta(r))
	if err != nil {
		if errs.KindOf(err) == errs.KindUnauthorized {
			a.d.Cookies.clearSession(w)
		}
		a.fail(w, r, err)
		return
	}
	a.d.Cookies.setSession(w, s, s.Access.IssuedAt)
	writeJSON(w, http.StatusOK, sessionBody(s, false))
}

// LogoutResponse is the body of POST /api/v1/auth/logout.
type LogoutResponse struct {
	LoggedOut bool `json:"logged_out"`
}

// logout revokes the refresh family and the access token, if any are
// presented and alive, and clears the cookies. It always succeeds for
// dead or missing tokens: logging out twice is fine.
func (a *authAPI) logout(w http.ResponseWriter, r *http.Request) {
	tok, err := a.refreshToken(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var claims *auth.Claims
	access, err := bearer(r)
	if err == nil && access == "" {
		access = cookieValue(r, accessCookie)
		if access != "" {
			err = a.checkOrigin(r)
		}
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if access != "" {
		if c, err := a.d.Sessions.Authenticate(r.Context(), access); err == nil {
			claims = &c
		}
	}
	if err := a.d.Sessions.Logout(r.Context(), claims, tok, meta(r)); err != nil {
		a.fail(w, r, err)
		return
	}
	a.d.Cookies.clearSession(w)
	writeJSON(w, http.StatusOK, LogoutResponse{LoggedOut: true})
}
