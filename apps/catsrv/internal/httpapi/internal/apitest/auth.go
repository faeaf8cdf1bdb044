package apitest

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
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/oauth"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// The CATs, origins and paths of the auth tests.
const (
	AuthCat        = "shop"
	AllowedOrigin  = "https://app.example.com"
	RefusedOrigin  = "https://evil.example.net"
	PostLoginURL   = "/welcome"
	DisabledCat    = "locked"
	AuthPrefix     = authapi.Prefix
	StateCookieFor = "catsrv_login_"
)

// AuthEnv is the HTTP app with all three providers configured against
// local identity providers, served over TLS so that Secure cookies travel.
type AuthEnv struct {
	Srv    *httptest.Server
	Clock  *clock.Fixed
	Store  *memstore.Auth
	Tokens *tokens.Service
	IDPs   map[string]*FakeIDP
}

// AuthOption changes the auth dependencies of an AuthEnv.
type AuthOption func(*authapi.Deps)

// GenericSetup builds generic OpenID Connect providers once the app's URL
// (their redirect URIs' base) is known: their names and labels, and the
// providers by name.
type GenericSetup func(appURL string) ([]authapi.NamedProvider, map[string]ports.IdentityProvider)

// GenericNames are the generic provider names the auth test CAT enables.
var GenericNames = []string{"corp", "forged", "down"}

// NewAuthEnv serves the HTTP app with every provider configured against
// its own fake identity provider, over TLS.
func NewAuthEnv(t *testing.T, opts ...AuthOption) *AuthEnv {
	t.Helper()
	return NewGenericAuthEnv(t, nil, opts...)
}

// NewGenericAuthEnv is NewAuthEnv with the generic providers setup builds
// (nil: none). The test CAT enables the GenericNames.
func NewGenericAuthEnv(t *testing.T, setup GenericSetup, opts ...AuthOption) *AuthEnv {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	e := &AuthEnv{Clock: clock.NewFixed(Now), Store: memstore.NewAuth(), IDPs: map[string]*FakeIDP{}}
	var handler http.Handler
	e.Srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(e.Srv.Close)

	shop := catconfig.Defaults(AuthCat)
	shop.Security.JWT.ExpirationHours = 2
	shop.Security.Providers.ProviderA.Enabled = true
	shop.Security.Providers.ProviderB.Enabled = true
	shop.Security.Providers.ProviderC.Enabled = true
	shop.Security.Providers.Generic = map[string]catconfig.Provider{}
	for _, name := range GenericNames {
		shop.Security.Providers.Generic[name] = catconfig.Provider{Enabled: true}
	}
	locked := catconfig.Defaults(DisabledCat)
	cats := memstore.NewCats(shop, locked)

	var err error
	e.Tokens, err = tokens.New([]byte(Secret), "catsrv", "catsrv", e.Clock)
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]ports.IdentityProvider{}
	users := map[string]IDPUser{
		auth.ProviderA: {"a-123", "ann@a.example", "Ann A"},
		auth.ProviderB: {"b-456", "bob@b.example", "Bob B"},
		auth.ProviderC: {"c-789", "cid@c.example", "Cid C"},
	}
	for _, p := range auth.Providers {
		idp := NewFakeIDP(t, p, users[p])
		e.IDPs[p] = idp
		c := oauth.Config{ClientID: idp.ClientID, ClientSecret: idp.Secret, RedirectURL: e.Srv.URL + AuthPrefix + "/" + p + "/callback", BaseURL: idp.Srv.URL}
		var prov ports.IdentityProvider
		switch p {
		case auth.ProviderA:
			prov, err = oauth.NewProviderA(c)
		case auth.ProviderB:
			prov, err = oauth.NewProviderB(c)
		case auth.ProviderC:
			prov, err = oauth.NewProviderC(c, idp.Tenant)
		}
		if err != nil {
			t.Fatal(err)
		}
		providers[p] = prov
	}
	deps := &authapi.Deps{
		Sessions: session.New(session.Deps{Tokens: e.Tokens, Users: e.Store, Refresh: e.Store, Revocations: e.Store,
			Audit: e.Store, Cats: cats, Clock: e.Clock, RefreshLifetime: 24 * time.Hour}),
		States:         session.NewStateSealer([]byte(Secret), e.Clock),
		Memory:         prefs.New(e.Store, prefs.Limits{MaxKeys: 5, MaxKeyBytes: 32, MaxValueBytes: 100, MaxTotalBytes: 300}, e.Clock),
		Cats:           cats,
		Providers:      providers,
		DefaultCat:     AuthCat,
		Cookies:        authapi.CookiePolicy{SameSite: http.SameSiteLaxMode},
		AllowedOrigins: []string{AllowedOrigin},
		PostLoginURL:   PostLoginURL,
	}
	if setup != nil {
		named, generic := setup(e.Srv.URL)
		deps.OIDC = named
		for name, p := range generic {
			providers[name] = p
		}
	}
	convs := memstore.NewConversations(memstore.New())
	deps.Privacy = privacy.New(privacy.Deps{Users: e.Store, UserEraser: e.Store, Refresh: e.Store, Revocations: e.Store,
		Memory: e.Store, Audit: e.Store, Conversations: convs, Interactions: memstore.New(), Clock: e.Clock, Store: convs})
	for _, o := range opts {
		o(deps)
	}
	_, handler = httpapi.New(httpapi.Deps{
		Tokens: e.Tokens, Auth: deps, Logger: slog.New(slog.DiscardHandler),
		Reporter: reporter.New(SampleCats(), memstore.New(), memstore.New(), e.Clock),
	})
	return e
}

// Browser is a client with its own cookie jar that does not follow
// redirects, so each step of a login can be checked.
type Browser struct {
	T      *testing.T
	E      *AuthEnv
	Client *http.Client
}

// Browser returns a new browser of the app, with its own cookie jar.
func (e *AuthEnv) Browser(t *testing.T) *Browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *e.Srv.Client() // a copy: the server hands out one shared client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Browser{T: t, E: e, Client: &c}
}

// Reply is one response, its body read.
type Reply struct {
	Status  int
	Header  http.Header
	Body    []byte
	Cookies []*http.Cookie
}

// JSON decodes the body as a JSON object.
func (r Reply) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.Body, err)
	}
	return m
}

// Do sends a request; header pairs are name, value.
func (b *Browser) Do(method, target, body string, header ...string) Reply {
	b.T.Helper()
	if !strings.HasPrefix(target, "http") {
		target = b.E.Srv.URL + target
	}
	req, err := http.NewRequestWithContext(b.T.Context(), method, target, strings.NewReader(body))
	if err != nil {
		b.T.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.T.Fatal(err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: raw, Cookies: resp.Cookies()}
}

// Cookie returns the jar's cookie for path, "" when none.
func (b *Browser) Cookie(name, path string) string {
	u, err := url.Parse(b.E.Srv.URL + path)
	if err != nil {
		b.T.Fatal(err)
	}
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// StartLogin posts the start request and returns the authorization URL.
func (b *Browser) StartLogin(provider, query string) string {
	b.T.Helper()
	r := b.Do(http.MethodPost, AuthPrefix+"/"+provider+query, "")
	if r.Status != http.StatusOK {
		b.T.Fatalf("start %s: status %d %s", provider, r.Status, r.Body)
	}
	u, _ := r.JSON(b.T)["authorization_url"].(string)
	if u == "" {
		b.T.Fatalf("start %s: no authorization_url in %s", provider, r.Body)
	}
	return u
}

// LoginAtIDP follows the authorization URL to the identity provider (the
// simulated login) and returns the callback URL it redirects to.
func (b *Browser) LoginAtIDP(authURL string) string {
	b.T.Helper()
	r := b.Do(http.MethodGet, authURL, "")
	if r.Status != http.StatusFound {
		b.T.Fatalf("identity provider: status %d %s", r.Status, r.Body)
	}
	return r.Header.Get("Location")
}

// Login runs a whole login and returns the callback's Reply.
func (b *Browser) Login(provider string, header ...string) Reply {
	b.T.Helper()
	return b.Do(http.MethodGet, b.LoginAtIDP(b.StartLogin(provider, "")), "", header...)
}

// SameOrigin is the Origin header of the app's own pages.
func (b *Browser) SameOrigin() []string { return []string{"Origin", b.E.Srv.URL} }

// NewTestServer serves h over TLS until the test ends.
func NewTestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
