package httpapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/errs"
)

// The cookies of a session. The refresh token is only sent to the auth
// routes; the access token to the whole API.
const (
	accessCookie  = "catsrv_access"
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
		*p.cookie(accessCookie, s.AccessToken, "/", secondsUntil(s.Access.ExpiresAt, now), p.sameSite()),
		*p.cookie(refreshCookie, s.RefreshToken, AuthPrefix, secondsUntil(s.RefreshExpiry, now), p.sameSite()),
	}
}

// clearedSession returns the cookies that delete both session cookies.
func (p CookiePolicy) clearedSession() []http.Cookie {
	return []http.Cookie{
		*p.cookie(accessCookie, "", "/", -1, p.sameSite()),
		*p.cookie(refreshCookie, "", AuthPrefix, -1, p.sameSite()),
	}
}

func stateCookiePath(provider string) string { return AuthPrefix + "/" + provider + "/callback" }

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

// cookieValue returns the value of the first cookie named name in the
// request's Cookie headers, "" when absent. The routes read their cookies
// here or as huma cookie inputs (huma.ReadCookies, a copy of the same
// standard-library parser), so all parse them alike and leniently, the way browsers send them: a pair that is not
// a valid cookie (a non-ASCII or quoted-inside value, an empty or spaced
// name, a stray ';') is skipped and the valid ones around it are kept, so
// an unrelated cookie of another application on the same host, such as
// lang=français, never signs the user out. These are net/http's
// Request.Cookies rules; http.ParseCookie, which fails the whole header
// on one bad pair, must not be used.
func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// originPolicy is which origins may use the session cookies: the CORS
// allowlist and the server's own origin.
type originPolicy struct {
	// allowed holds the normalized origins of security.cors.allowed_origins.
	allowed map[string]bool
	// public is the configured public origin, normalized; "" when unset or
	// invalid.
	public string
}

func newOriginPolicy(allowed []string, public string) originPolicy {
	p := originPolicy{allowed: map[string]bool{}}
	for _, o := range allowed {
		if n, ok := normalizeOrigin(o); ok {
			p.allowed[n] = true
		}
	}
	if n, ok := normalizeOrigin(public); ok {
		p.public = n
	}
	return p
}

// check is the CSRF defence of cookie-authenticated requests that
// change state (on top of SameSite): the request must come from this
// server's own origin or from one on the CORS allowlist, compared as whole
// origins: scheme, host and port (http://host is not https://host).
// Browsers send Origin on every cross-origin request and on same-origin
// POSTs; a request with neither Origin nor Referer is refused.
func (p originPolicy) check(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		if ref := r.Referer(); ref != "" {
			if u, err := url.Parse(ref); err == nil {
				origin = u.Scheme + "://" + u.Host
			}
		}
	}
	if origin == "" || origin == "null" {
		return errs.New(errs.KindForbidden, "cookie-authenticated requests must carry an Origin header (CSRF protection); API clients should send Authorization: Bearer")
	}
	n, ok := normalizeOrigin(origin)
	if ok && (p.allowed[n] || n == p.own(r)) {
		return nil
	}
	return errs.New(errs.KindForbidden, "origin %s may not use the session cookies: it is not in security.cors.allowed_origins", truncateOrigin(origin))
}

// ownOrigin is this server's origin as browsers see it: the public origin
// when one is configured (behind a TLS-terminating proxy the connection
// says nothing of the scheme browsers use), else the origin the request
// was sent to, https when the connection is TLS. "" matches nothing.
func (p originPolicy) own(r *http.Request) string {
	if p.public != "" {
		return p.public
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if o, ok := normalizeOrigin(scheme + "://" + r.Host); ok {
		return o
	}
	return ""
}

func truncateOrigin(o string) string {
	if len(o) > 100 {
		return o[:100] + "..."
	}
	return o
}
