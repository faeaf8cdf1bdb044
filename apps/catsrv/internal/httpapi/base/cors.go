package base

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// corsMaxAge is how long a browser may cache a preflight answer, seconds.
const corsMaxAge = "600"

// normalizeOrigin returns an origin as browsers send it
// (scheme://host[:port], lower case, no default port, no path), and false
// for anything that is not an http(s) origin. "*" is never an origin.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if (u.Scheme == "https" && strings.HasSuffix(host, ":443")) || (u.Scheme == "http" && strings.HasSuffix(host, ":80")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// WithCORS applies the CORS allowlist of p to every route. A listed origin gets
// its own name back with credentials allowed; any other origin gets no
// CORS header at all (the browser then withholds the answer), and its
// preflights are refused with 403. There is no wildcard.
func WithCORS(p OriginPolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		n, ok := normalizeOrigin(origin)
		allowed := ok && p.Allowed[n]
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if !allowed {
				WriteJSON(w, http.StatusForbidden, ErrorBody{Code: "FORBIDDEN", Status: http.StatusForbidden,
					Message: "CORS: origin " + truncateOrigin(origin) + " is not allowed"})
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE") // every method of the API (PUT: a rename)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		next.ServeHTTP(w, r)
	})
}

// OriginPolicy is which origins may use the session cookies: the CORS
// allowlist and the server's own origin.
type OriginPolicy struct {
	// Allowed holds the normalized origins of security.cors.allowed_origins.
	Allowed map[string]bool
	// public is the configured public origin, normalized; "" when unset or
	// invalid.
	public string
}

// NewOriginPolicy is the policy of a CORS allowlist and the server's public
// origin ("" or invalid: the origin each request was sent to).
func NewOriginPolicy(allowed []string, public string) OriginPolicy {
	p := OriginPolicy{Allowed: map[string]bool{}}
	for _, o := range allowed {
		if n, ok := normalizeOrigin(o); ok {
			p.Allowed[n] = true
		}
	}
	if n, ok := normalizeOrigin(public); ok {
		p.public = n
	}
	return p
}

// Check is the CSRF defence of cookie-authenticated requests that
// change state (on top of SameSite): the request must come from this
// server's own origin or from one on the CORS allowlist, compared as whole
// origins: scheme, host and port (http://host is not https://host).
// Browsers send Origin on every cross-origin request and on same-origin
// POSTs; a request with neither Origin nor Referer is refused.
func (p OriginPolicy) Check(r *http.Request) error {
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
	if ok && (p.Allowed[n] || n == p.own(r)) {
		return nil
	}
	return errs.New(errs.KindForbidden, "origin %s may not use the session cookies: it is not in security.cors.allowed_origins", truncateOrigin(origin))
}

// own is this server's origin as browsers see it: the public origin
// when one is configured (behind a TLS-terminating proxy the connection
// says nothing of the scheme browsers use), else the origin the request
// was sent to, https when the connection is TLS. "" matches nothing.
func (p OriginPolicy) own(r *http.Request) string {
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

// CookieValue returns the value of the first cookie named name in the
// request's Cookie headers, "" when absent. The routes read their cookies
// here or as huma cookie inputs (huma.ReadCookies, a copy of the same
// standard-library parser), so all parse them alike and leniently, the way browsers send them: a pair that is not
// a valid cookie (a non-ASCII or quoted-inside value, an empty or spaced
// name, a stray ';') is skipped and the valid ones around it are kept, so
// an unrelated cookie of another application on the same host, such as
// lang=français, never signs the user out. These are net/http's
// Request.Cookies rules; http.ParseCookie, which fails the whole header
// on one bad pair, must not be used.
func CookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}
