package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// AuthPrefix is the path every authentication and memory route starts with.
const AuthPrefix = "/api/v1/auth"

// maxAuthBody bounds the bodies of refresh and logout.
const maxAuthBody = 8 << 10

// AuthDeps are what the /api/v1/auth routes need. The routes are plain
// net/http handlers on the same mux as the huma API: they set cookies and
// redirect; documentAuth (auth_openapi.go) describes them in the OpenAPI
// document for the generated client, and docs/auth.md tells the flow.
type AuthDeps struct {
	Sessions *session.Service
	States   *session.StateSealer
	Memory   *prefs.Service
	Cats     ports.CatDirectory
	// Providers holds the providers whose credentials are configured, by
	// name (auth.ProviderA …); a provider missing here answers 503.
	Providers map[string]ports.IdentityProvider
	// DefaultCat is the CAT whose settings a login uses when the start
	// request names none (query parameter catname).
	DefaultCat string
	Cookies    CookiePolicy
	// AllowedOrigins is the CORS allowlist (scheme://host[:port]); the same
	// origins may use the session cookies in state-changing requests.
	AllowedOrigins []string
	// PublicOrigin is the server's own origin as browsers see it
	// (scheme://host[:port], from CATSRV_PUBLIC_URL): cookie-authenticated
	// requests from it pass the CSRF check. "" takes the origin each
	// request was sent to (https when its connection is TLS).
	PublicOrigin string
	// PostLoginURL is where a browser goes after a successful login; ""
	// means "/".
	PostLoginURL string
	// RateLimit limits, per client address, the routes an anonymous
	// client can make write the audit log (ratelimit.go); the zero value
	// is the defaults.
	RateLimit RateLimit
}

// authAPI serves the /api/v1/auth routes.
type authAPI struct {
	d       AuthDeps
	log     *slog.Logger
	origins map[string]bool
	// public is d.PublicOrigin normalized, "" when unset or invalid.
	public string
	// limiter is nil when the rate limit is off.
	limiter *clientLimiter
}

func newAuthAPI(d *AuthDeps, log *slog.Logger) *authAPI {
	if d == nil {
		return &authAPI{log: log}
	}
	a := &authAPI{d: *d, log: log, origins: map[string]bool{}}
	for _, o := range d.AllowedOrigins {
		if n, ok := normalizeOrigin(o); ok {
			a.origins[n] = true
		}
	}
	if n, ok := normalizeOrigin(d.PublicOrigin); ok {
		a.public = n
	}
	if a.d.PostLoginURL == "" {
		a.d.PostLoginURL = "/"
	}
	if !d.RateLimit.Disabled {
		a.limiter = newClientLimiter(d.RateLimit)
	}
	return a
}

// configured reports whether the routes have their dependencies.
func (a *authAPI) configured() bool { return a.d.Sessions != nil }

// registerAuth adds the /api/v1/auth routes to the mux. The routes an
// anonymous client can make write the audit log (start, callback,
// refresh, logout) are rate-limited per client address; the memory routes
// need a session, and /providers writes nothing.
func registerAuth(mux *http.ServeMux, a *authAPI) {
	for _, p := range auth.Providers {
		mux.HandleFunc("POST "+AuthPrefix+"/"+p, a.guard(a.limited(func(w http.ResponseWriter, r *http.Request) { a.start(w, r, p) })))
		mux.HandleFunc("GET "+AuthPrefix+"/"+p+"/callback", a.guard(a.limited(func(w http.ResponseWriter, r *http.Request) { a.callback(w, r, p) })))
	}
	mux.HandleFunc("GET "+AuthPrefix+"/providers", a.guard(a.listProviders))
	mux.HandleFunc("POST "+AuthPrefix+"/refresh", a.guard(a.limited(a.refresh)))
	mux.HandleFunc("POST "+AuthPrefix+"/logout", a.guard(a.limited(a.logout)))
	mux.HandleFunc("GET "+AuthPrefix+"/memory", a.guard(a.getMemory))
	mux.HandleFunc("POST "+AuthPrefix+"/memory", a.guard(a.postMemory))
	mux.HandleFunc("DELETE "+AuthPrefix+"/memory", a.guard(a.deleteMemory))
}

// guard answers 503 while authentication is not configured, and marks
// every answer uncacheable: they carry tokens or personal data.
func (a *authAPI) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if !a.configured() {
			a.fail(w, r, errs.New(errs.KindUnavailable, "authentication is not configured on this server"))
			return
		}
		h(w, r)
	}
}

// fail answers err by the auth error table.
func (a *authAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	a.failWith(w, r, err, authKindResponses)
}

func (a *authAPI) failWith(w http.ResponseWriter, r *http.Request, err error, table map[errs.Kind]kindResponse) {
	body := errorBodyFor(r.Context(), a.log, err, table)
	setFailureHeaders(w, err, body.Status)
	writeJSON(w, body.Status, body)
}

// writeJSON writes v as the JSON body of status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// meta is what the audit log records of a request. The client IP is the
// connection's peer: behind a proxy, that is the proxy.
func meta(r *http.Request) auth.RequestMeta {
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	return auth.RequestMeta{IP: ip, UserAgent: cutText(r.UserAgent(), 512)}
}

// cutText returns at most the first n bytes of s, cut before a rune that
// would not fit rather than inside it.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n] // not UTF-8 there anyway
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

// authenticate finds the caller: a bearer token, else the access cookie.
// A cookie-authenticated request that changes state must pass the origin
// check (CSRF). Revoked tokens are refused.
func (a *authAPI) authenticate(r *http.Request) (auth.Claims, error) {
	tok, err := bearer(r)
	if err != nil {
		return auth.Claims{}, err
	}
	if tok == "" {
		tok = cookieValue(r, accessCookie)
		if tok == "" {
			return auth.Claims{}, errs.New(errs.KindUnauthorized, "authentication required: send Authorization: Bearer <token> or the session cookie")
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := a.checkOrigin(r); err != nil {
				return auth.Claims{}, err
			}
		}
	}
	return a.d.Sessions.Authenticate(r.Context(), tok)
}

// cat resolves the CAT whose settings apply to a login: the named one,
// else the default.
func (a *authAPI) cat(ctx context.Context, name string) (catconfig.Cat, error) {
	if name == "" {
		name = a.d.DefaultCat
	}
	if name == "" {
		return catconfig.Cat{}, errs.New(errs.KindInvalid, "no default CAT: name one with ?catname=")
	}
	return a.d.Cats.Cat(ctx, name)
}

// providerEnabled reads security.providers.<p>.enabled.
func providerEnabled(c catconfig.Cat, provider string) bool {
	switch provider {
	case auth.ProviderA:
		return c.Security.Providers.ProviderA.Enabled
	case auth.ProviderB:
		return c.Security.Providers.ProviderB.Enabled
	case auth.ProviderC:
		return c.Security.Providers.ProviderC.Enabled
	}
	return false
}
