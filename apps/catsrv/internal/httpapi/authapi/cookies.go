package authapi

import (
	"net/http"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth/session"
)

// The cookies of a session. The refresh token is only sent to the auth
// routes; the access token (base.AccessCookie) to the whole API.
const (
	refreshCookie = "catsrv_refresh"
	// stateCookiePrefix + provider holds a login in progress, sent only to
	// that provider's callback.
	stateCookiePrefix = "catsrv_login_"
)

// CookiePolicy is how session cookies are set. They are always httpOnly.
type CookiePolicy struct {
	// Insecure drops the Secure flag: only for plain-http development on
	// localhost (the composition root refuses it otherwise).
	Insecure bool
	// SameSite of the access and refresh cookies: http.SameSiteLaxMode or
	// http.SameSiteStrictMode (default Lax). The login state cookie is
	// always Lax: it must come back on the provider's cross-site redirect.
	SameSite http.SameSite
	// Domain, when set, shares the cookies with subdomains.
	Domain string
}

func (p CookiePolicy) sameSite() http.SameSite {
	if p.SameSite == http.SameSiteStrictMode {
		return p.SameSite
	}
	return http.SameSiteLaxMode
}

func (p CookiePolicy) cookie(name, value, path string, maxAge int, sameSite http.SameSite) *http.Cookie {
	// Secure is off only with Insecure, which the composition root allows
	// for plain-http localhost development alone.
	return &http.Cookie{ //nolint:gosec // G124: HttpOnly and SameSite always set, Secure as explained above
		Name: name, Value: value, Path: path, Domain: p.Domain, MaxAge: maxAge,
		HttpOnly: true, Secure: !p.Insecure, SameSite: sameSite,
	}
}

// session returns the access and refresh cookies of a new session.
func (p CookiePolicy) session(s session.Session, now time.Time) []http.Cookie {
	return []http.Cookie{
		*p.cookie(base.AccessCookie, s.AccessToken, "/", secondsUntil(s.Access.ExpiresAt, now), p.sameSite()),
		*p.cookie(refreshCookie, s.RefreshToken, Prefix, secondsUntil(s.RefreshExpiry, now), p.sameSite()),
	}
}

// clearedSession returns the cookies that delete both session cookies.
func (p CookiePolicy) clearedSession() []http.Cookie {
	return []http.Cookie{
		*p.cookie(base.AccessCookie, "", "/", -1, p.sameSite()),
		*p.cookie(refreshCookie, "", Prefix, -1, p.sameSite()),
	}
}

func stateCookiePath(provider string) string { return Prefix + "/" + provider + "/callback" }

// state returns the cookie that binds a login in progress to the browser.
func (p CookiePolicy) state(provider, sealed string) http.Cookie {
	return *p.cookie(stateCookiePrefix+provider, sealed, stateCookiePath(provider), int(session.StateTTL/time.Second), http.SameSiteLaxMode)
}

// clearedState returns the cookie that deletes the login state cookie.
func (p CookiePolicy) clearedState(provider string) http.Cookie {
	return *p.cookie(stateCookiePrefix+provider, "", stateCookiePath(provider), -1, http.SameSiteLaxMode)
}

func secondsUntil(t, now time.Time) int {
	s := int(t.Sub(now) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}
