package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/identity"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

const (
	authCat        = "shop"
	allowedOrigin  = "https://app.example.com"
	refusedOrigin  = "https://evil.example.net"
	postLoginURL   = "/welcome"
	disabledCat    = "locked"
	authPrefix     = authapi.Prefix
	stateCookieFor = "catsrv_login_"
)

// authEnv is the HTTP app with all three providers configured against
// local identity providers, served over TLS so that Secure cookies travel.
type authEnv struct {
	srv    *httptest.Server
	clock  *clock.Fixed
	store  *memstore.Auth
	tokens *tokens.Service
	idps   map[string]*fakeIDP
}

type authOption func(*authapi.Deps)

func newAuthEnv(t *testing.T, opts ...authOption) *authEnv {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	e := &authEnv{clock: clock.NewFixed(now), store: memstore.NewAuth(), idps: map[string]*fakeIDP{}}
	var handler http.Handler
	e.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(e.srv.Close)

	shop := catconfig.Defaults(authCat)
	shop.Security.JWT.ExpirationHours = 2
	shop.Security.Providers.ProviderA.Enabled = true
	shop.Security.Providers.ProviderB.Enabled = true
	shop.Security.Providers.ProviderC.Enabled = true
	locked := catconfig.Defaults(disabledCat)
	cats := memstore.NewCats(shop, locked)

	var err error
	e.tokens, err = tokens.New([]byte(testSecret), "catsrv", "catsrv", e.clock)
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]ports.IdentityProvider{}
	users := map[string]idpUser{
		auth.ProviderA: {"a-123", "ann@a.example", "Ann A"},
		auth.ProviderB: {"b-456", "bob@b.example", "Bob B"},
		auth.ProviderC: {"c-789", "cid@c.example", "Cid C"},
	}
	for _, p := range auth.Providers {
		idp := newFakeIDP(t, p, users[p])
		e.idps[p] = idp
		c := identity.Config{ClientID: idp.clientID, ClientSecret: idp.secret, RedirectURL: e.srv.URL + authPrefix + "/" + p + "/callback", BaseURL: idp.srv.URL}
		var prov ports.IdentityProvider
		switch p {
		case auth.ProviderA:
			prov, err = identity.NewProviderA(c)
		case auth.ProviderB:
			prov, err = identity.NewProviderB(c)
		case auth.ProviderC:
			prov, err = identity.NewProviderC(c, idp.tenant)
		}
		if err != nil {
			t.Fatal(err)
		}
		providers[p] = prov
	}
	deps := &authapi.Deps{
		Sessions: session.New(session.Deps{Tokens: e.tokens, Users: e.store, Refresh: e.store, Revocations: e.store,
			Audit: e.store, Cats: cats, Clock: e.clock, RefreshLifetime: 24 * time.Hour}),
		States:         session.NewStateSealer([]byte(testSecret), e.clock),
		Memory:         prefs.New(e.store, prefs.Limits{MaxKeys: 5, MaxKeyBytes: 32, MaxValueBytes: 100, MaxTotalBytes: 300}, e.clock),
		Cats:           cats,
		Providers:      providers,
		DefaultCat:     authCat,
		Cookies:        authapi.CookiePolicy{SameSite: http.SameSiteLaxMode},
		AllowedOrigins: []string{allowedOrigin},
		PostLoginURL:   postLoginURL,
	}
	for _, o := range opts {
		o(deps)
	}
	_, handler = httpapi.New(httpapi.Deps{
		Tokens: e.tokens, Auth: deps, Logger: slog.New(slog.DiscardHandler),
		Reporter: reporter.New(testCats(), memstore.New(), memstore.New(), e.clock),
	})
	return e
}

// browser is a client with its own cookie jar that does not follow
// redirects, so each step of a login can be checked.
type browser struct {
	t      *testing.T
	e      *authEnv
	client *http.Client
}

func (e *authEnv) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *e.srv.Client() // a copy: the server hands out one shared client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: t, e: e, client: &c}
}

// reply is one response, its body read.
type reply struct {
	status  int
	header  http.Header
	body    []byte
	cookies []*http.Cookie
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends a request; header pairs are name, value.
func (b *browser) do(method, target, body string, header ...string) reply {
	b.t.Helper()
	if !strings.HasPrefix(target, "http") {
		target = b.e.srv.URL + target
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw, cookies: resp.Cookies()}
}

// cookie returns the jar's cookie for path, "" when none.
func (b *browser) cookie(name, path string) string {
	u, err := url.Parse(b.e.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// startLogin posts the start request and returns the authorization URL.
func (b *browser) startLogin(provider, query string) string {
	b.t.Helper()
	r := b.do(http.MethodPost, authPrefix+"/"+provider+query, "")
	if r.status != http.StatusOK {
		b.t.Fatalf("start %s: status %d %s", provider, r.status, r.body)
	}
	u, _ := r.json(b.t)["authorization_url"].(string)
	if u == "" {
		b.t.Fatalf("start %s: no authorization_url in %s", provider, r.body)
	}
	return u
}

// loginAtIDP follows the authorization URL to the identity provider (the
// simulated login) and returns the callback URL it redirects to.
func (b *browser) loginAtIDP(authURL string) string {
	b.t.Helper()
	r := b.do(http.MethodGet, authURL, "")
	if r.status != http.StatusFound {
		b.t.Fatalf("identity provider: status %d %s", r.status, r.body)
	}
	return r.header.Get("Location")
}

// login runs a whole login and returns the callback's reply.
func (b *browser) login(provider string, header ...string) reply {
	b.t.Helper()
	return b.do(http.MethodGet, b.loginAtIDP(b.startLogin(provider, "")), "", header...)
}

// sameOrigin is the Origin header of the app's own pages.
func (b *browser) sameOrigin() []string { return []string{"Origin", b.e.srv.URL} }

func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
