// Package authapi is the authentication part of catsrv's HTTP app: the
// routes under /api/v1/auth (provider logins, session refresh and logout,
// each user's memory), the session cookies they set and the rate limit in
// front of them.
package authapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Prefix is the path every authentication and memory route starts with.
const Prefix = "/api/v1/auth"

// maxAuthBody bounds the bodies of refresh and logout.
const maxAuthBody = 8 << 10

// Deps are what the /api/v1/auth routes need; without Sessions they answer
// 503. The routes are huma operations like every other (Register): their query parameters are
// inputs, the cookies they set and the redirect of a login are outputs;
// docs/auth.md tells the flow.
type Deps struct {
	Sessions *session.Service
	States   *session.StateSealer
	Memory   *prefs.Service
	// Privacy erases and exports people's data; without it those routes
	// answer 503.
	Privacy *privacy.Service
	Cats    ports.CatDirectory
	// Providers holds the providers whose credentials are configured, by
	// name (auth.ProviderA …, and the generic ones of OIDC); a provider
	// missing here answers 503.
	Providers map[string]ports.IdentityProvider
	// OIDC lists the generic OpenID Connect providers (CATSRV_OIDC_PROVIDERS)
	// in order: each gets the routes the three have, under its name.
	OIDC []NamedProvider
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
	// Logger receives the causes of internal errors; nil means
	// slog.Default().
	Logger *slog.Logger
}

// NamedProvider is a generic provider's name (route segment, account
// namespace) and the label of its sign-in button.
type NamedProvider struct {
	Name        string
	DisplayName string
}

// names lists every provider with routes: the three, then the generic
// ones.
func (d Deps) names() []string {
	out := append([]string(nil), auth.Providers...)
	for _, p := range d.OIDC {
		out = append(out, p.Name)
	}
	return out
}

// displayName is the label of a provider's sign-in button.
func (d Deps) displayName(name string) string {
	for _, p := range d.OIDC {
		if p.Name == name && p.DisplayName != "" {
			return p.DisplayName
		}
	}
	return name
}

// authAPI serves the /api/v1/auth routes.
type authAPI struct {
	d       Deps
	log     *slog.Logger
	origins base.OriginPolicy
	// limiter is nil when the rate limit is off.
	limiter *clientLimiter
}

func newAuthAPI(d Deps) *authAPI {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	if d.Sessions == nil {
		return &authAPI{log: log}
	}
	a := &authAPI{d: d, log: log, origins: base.NewOriginPolicy(d.AllowedOrigins, d.PublicOrigin)}
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

// guard is the first middleware of every /api/v1/auth operation: it
// answers 503 while authentication is not configured. (base.WithRequest, before
// it, marks every answer uncacheable: they carry tokens or personal data.)
func (a *authAPI) guard(ctx huma.Context, next func(huma.Context)) {
	if !a.configured() {
		r, w := humago.Unwrap(ctx)
		a.fail(w, r, errs.New(errs.KindUnavailable, "authentication is not configured on this server"))
		return
	}
	next(ctx)
}

// fail answers err by the auth error table, for the middlewares that
// answer before any handler runs.
func (a *authAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	body := base.ErrorBodyFor(r.Context(), a.log, err, base.AuthKinds)
	base.SetFailureHeaders(w, err, body.Status)
	base.WriteJSON(w, body.Status, body)
}

// authError is err answered by the auth error table, with cookies to set
// (to clear a dead session or login, say), as huma writes it.
func (a *authAPI) authError(ctx context.Context, err error, cookies ...http.Cookie) error {
	return base.ErrorFor(ctx, a.log, err, base.AuthKinds, cookies...)
}

// memoryError is err answered by the table of the /memory routes.
func (a *authAPI) memoryError(ctx context.Context, err error) error {
	return base.ErrorFor(ctx, a.log, err, base.MemoryKinds)
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
	return c.Security.Providers.Enabled(provider)
}
