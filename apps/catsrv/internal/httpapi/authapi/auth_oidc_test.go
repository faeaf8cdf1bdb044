package authapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/adapters/oidc/oidctest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/ports"
)

const (
	oidcClient = "catsrv-web"
	oidcSecret = "the-client-secret-of-the-catsrv-web-client"
)

// oidcEnv is the app with three generic providers: corp, a real OpenID
// Provider (zitadel/oidc op); forged, a Forger whose ID tokens the test
// writes; down, a Forger whose discovery document names another issuer.
type oidcEnv struct {
	*AuthEnv
	op           *oidctest.OP
	forged, down *oidctest.Forger
}

func newOIDCEnv(t *testing.T) *oidcEnv {
	t.Helper()
	o := &oidcEnv{}
	o.AuthEnv = NewGenericAuthEnv(t, func(appURL string) ([]authapi.NamedProvider, map[string]ports.IdentityProvider) {
		callback := func(name string) string { return appURL + AuthPrefix + "/" + name + "/callback" }
		o.op = oidctest.NewOP(t, oidcClient, oidcSecret, callback("corp"))
		o.forged = oidctest.NewForger(t, oidcClient, oidcSecret)
		o.down = oidctest.NewForger(t, oidcClient, oidcSecret)
		o.down.SetDiscoveredIssuer("https://elsewhere.example.com")
		providers := map[string]ports.IdentityProvider{}
		for name, issuer := range map[string]string{"corp": o.op.Issuer, "forged": o.forged.Issuer, "down": o.down.Issuer} {
			p, err := oidc.New(oidc.Config{Name: name, Issuer: issuer, ClientID: oidcClient, ClientSecret: oidcSecret, RedirectURL: callback(name)})
			if err != nil {
				t.Fatal(err)
			}
			providers[name] = p
		}
		return []authapi.NamedProvider{{Name: "corp", DisplayName: "Corp SSO"}, {Name: "forged"}, {Name: "down", DisplayName: "Down"}}, providers
	})
	return o
}

// TestOIDCLoginFlow runs the whole flow through the HTTP app against a
// real OpenID Provider: the listing with the display name, start (PKCE
// S256, nonce, scopes), the provider's login page, callback, session
// cookies, /memory, refresh, logout; a second login after the provider
// rotated its signing key finds the same account.
func TestOIDCLoginFlow(t *testing.T) {
	e := newOIDCEnv(t)
	b := e.Browser(t)

	list := b.Do(http.MethodGet, AuthPrefix+"/providers", "")
	if list.Status != 200 || !strings.Contains(string(list.Body), `{"name":"corp","display_name":"Corp SSO","start_url":"/api/v1/auth/corp?catname=shop"}`) ||
		!strings.Contains(string(list.Body), `{"name":"provider_a","display_name":"provider_a",`) {
		t.Fatalf("GET /providers: %d %s", list.Status, list.Body)
	}

	authURL := b.StartLogin("corp", "")
	u, err := url.Parse(authURL)
	if err != nil || !strings.HasPrefix(authURL, e.op.Issuer+"/") {
		t.Fatalf("authorization URL %q does not point at the provider %s", authURL, e.op.Issuer)
	}
	q := u.Query()
	if q.Get("client_id") != oidcClient || q.Get("redirect_uri") != e.Srv.URL+AuthPrefix+"/corp/callback" || q.Get("scope") != "openid email profile" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || len(q.Get("nonce")) < 40 || len(q.Get("state")) < 40 {
		t.Fatalf("authorization request %v", q)
	}

	cb := b.Do(http.MethodGet, e.op.Login(t, b.Client, authURL), "")
	if cb.Status != http.StatusSeeOther || cb.Header.Get("Location") != PostLoginURL {
		t.Fatalf("callback: status %d, Location %q, body %s", cb.Status, cb.Header.Get("Location"), cb.Body)
	}
	access, refresh := b.Cookie("catsrv_access", "/"), b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
	if access == "" || refresh == "" {
		t.Fatalf("session cookies missing after the callback: %v", cb.Cookies)
	}
	claims, err := e.Tokens.Verify(access)
	if err != nil || claims.Role != auth.RoleUser {
		t.Fatalf("access token %+v, %v", claims, err)
	}
	user, err := e.Store.User(t.Context(), claims.Subject)
	want := auth.Identity{Provider: "corp", Subject: oidctest.Subject, Email: oidctest.Email, Name: oidctest.Name}
	if err != nil || user.Identity != want {
		t.Fatalf("stored user %+v, %v; want %+v", user, err, want)
	}

	if r := b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":{"lang":"fr"}}`, b.SameOrigin()...); r.Status != 200 {
		t.Fatalf("POST /memory: %d %s", r.Status, r.Body)
	}
	if r := b.Do(http.MethodGet, AuthPrefix+"/memory", ""); r.Status != 200 || !strings.Contains(string(r.Body), `"lang":"fr"`) {
		t.Fatalf("GET /memory: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(time.Minute)
	if r := b.Do(http.MethodPost, AuthPrefix+"/refresh", "", b.SameOrigin()...); r.Status != 200 || b.Cookie("catsrv_access", "/") == access {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	if r := b.Do(http.MethodPost, AuthPrefix+"/logout", "", b.SameOrigin()...); r.Status != 200 || b.Cookie("catsrv_access", "/") != "" {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	if r := anon(t, e.AuthEnv).Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+access); r.Status != http.StatusUnauthorized {
		t.Fatalf("the access token after logout: %d %s", r.Status, r.Body)
	}

	e.op.RotateKey()
	b2 := e.Browser(t)
	if r := b2.Do(http.MethodGet, e.op.Login(t, b2.Client, b2.StartLogin("corp", "")), "", "Accept", "application/json"); r.Status != 200 {
		t.Fatalf("login after a key rotation: %d %s", r.Status, r.Body)
	}
	claims2, err := e.Tokens.Verify(b2.Cookie("catsrv_access", "/"))
	if err != nil || claims2.Subject != claims.Subject {
		t.Fatalf("second login %+v, %v: want the same account %s", claims2, err, claims.Subject)
	}
	assertAudit(t, e.AuthEnv, auth.AuditLoginStart, auth.AuditLoginSuccess, auth.AuditRefresh, auth.AuditLogout)
}

// TestOIDCReplayedState: the provider's redirect, played again with the
// login's state cookie, is refused once the login completed.
func TestOIDCReplayedState(t *testing.T) {
	e := newOIDCEnv(t)
	b := e.Browser(t)
	callback := e.op.Login(t, b.Client, b.StartLogin("corp", ""))
	sealed := b.Cookie(StateCookieFor+"corp", AuthPrefix+"/corp/callback")
	if r := b.Do(http.MethodGet, callback, ""); r.Status != http.StatusSeeOther {
		t.Fatalf("first callback: %d %s", r.Status, r.Body)
	}
	r := anon(t, e.AuthEnv).Do(http.MethodGet, callback, "", "Cookie", StateCookieFor+"corp="+sealed)
	if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "already completed") || cookieIn(r.Cookies, "catsrv_access") != "" {
		t.Fatalf("replayed callback: %d %s", r.Status, r.Body)
	}
	assertAudit(t, e.AuthEnv, auth.AuditLoginFailure)
}

// TestOIDCRefusedIDTokens: each ID token that must not sign anyone in
// answers 401, sets no session, and is audited with its reason. The
// tokens are served by a Forger (no real provider signs them), verified
// against its real discovery and JWKS documents.
func TestOIDCRefusedIDTokens(t *testing.T) {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		token  func(f *oidctest.Forger, nonce string) string
		reason string
	}{
		{"signed by another key", func(f *oidctest.Forger, n string) string { return oidctest.Sign(t, f.Claims(n), other, f.KeyID) }, "signature"},
		{"another audience", func(f *oidctest.Forger, n string) string {
			c := f.Claims(n)
			c["aud"] = "another-client"
			return oidctest.Sign(t, c, f.Key, f.KeyID)
		}, "audience"},
		{"expired", func(f *oidctest.Forger, n string) string {
			c := f.Claims(n)
			c["iat"], c["exp"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-30*time.Minute).Unix()
			return oidctest.Sign(t, c, f.Key, f.KeyID)
		}, "expired"},
		{"wrong nonce", func(f *oidctest.Forger, _ string) string {
			return oidctest.Sign(t, f.Claims("another-login"), f.Key, f.KeyID)
		}, "nonce"},
		{"missing nonce", func(f *oidctest.Forger, _ string) string { return oidctest.Sign(t, f.Claims(""), f.Key, f.KeyID) }, "nonce"},
		{"alg none", func(f *oidctest.Forger, n string) string { return oidctest.Unsigned(t, f.Claims(n)) }, "alg"},
		{"HS256 with the client secret", func(f *oidctest.Forger, n string) string { return oidctest.SignHS256(t, f.Claims(n), oidcSecret) }, "HS256"},
	}
	e := newOIDCEnv(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := e.Browser(t)
			u, err := url.Parse(b.StartLogin("forged", ""))
			if err != nil {
				t.Fatal(err)
			}
			e.forged.SetIDToken(c.token(e.forged, u.Query().Get("nonce")))
			callback := AuthPrefix + "/forged/callback?code=a-code&state=" + url.QueryEscape(u.Query().Get("state"))
			r := b.Do(http.MethodGet, callback, "")
			if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "the ID token was refused") || !strings.Contains(string(r.Body), c.reason) {
				t.Fatalf("callback: %d %s; want 401 for %q", r.Status, r.Body, c.reason)
			}
			if cookieIn(r.Cookies, "catsrv_access") != "" {
				t.Fatal("a refused ID token set a session cookie")
			}
			events, err := e.Store.Events(t.Context(), auth.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			last := events[len(events)-1]
			if last.Kind != auth.AuditLoginFailure || last.Provider != "forged" || !strings.Contains(last.Reason, c.reason) {
				t.Fatalf("last audit event %+v: want a forged login_failure giving %q", last, c.reason)
			}
		})
	}
}

// TestOIDCDiscoveryFailure: a provider whose discovery document names
// another issuer answers 503, audited with the reason, while the others
// keep working; once its document is right, it works without a restart.
func TestOIDCDiscoveryFailure(t *testing.T) {
	e := newOIDCEnv(t)
	b := e.Browser(t)
	r := b.Do(http.MethodPost, AuthPrefix+"/down", "")
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), `names the issuer \"https://elsewhere.example.com\"`) {
		t.Fatalf("start with a foreign issuer: %d %s", r.Status, r.Body)
	}
	events, err := e.Store.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(ev auth.AuditEvent) bool {
		return ev.Kind == auth.AuditLoginFailure && ev.Provider == "down" && strings.Contains(ev.Reason, "elsewhere.example.com")
	}) {
		t.Fatalf("no audited discovery failure: %+v", events)
	}
	if cb := b.Do(http.MethodGet, e.op.Login(t, b.Client, b.StartLogin("corp", "")), ""); cb.Status != http.StatusSeeOther {
		t.Fatalf("corp while down is broken: %d %s", cb.Status, cb.Body)
	}
	e.down.SetDiscoveredIssuer(e.down.Issuer)
	if u := b.StartLogin("down", ""); !strings.HasPrefix(u, e.down.Issuer+"/authorize?") {
		t.Fatalf("down, once its document is right: %s", u)
	}
}

// TestOIDCRoutesAreDocumented: each generic provider's routes are in the
// served document like the three's, and what they answer (a start, a
// discovery failure, a login, a refused token, a missing state cookie) is
// documented for its operation.
func TestOIDCRoutesAreDocumented(t *testing.T) {
	e := newOIDCEnv(t)
	var doc authDocument
	if err := json.Unmarshal(anon(t, e.AuthEnv).Do(http.MethodGet, "/openapi.json", "").Body, &doc); err != nil {
		t.Fatal(err)
	}
	documented := func(method, path string, status int) {
		t.Helper()
		if _, ok := doc.Paths[path][strings.ToLower(method)].Responses[strconv.Itoa(status)]; !ok {
			t.Errorf("%s %s %d is not in the document", method, path, status)
		}
	}
	b := e.Browser(t)
	authURL := b.StartLogin("corp", "")
	documented(http.MethodPost, AuthPrefix+"/corp", http.StatusOK)
	cb := b.Do(http.MethodGet, e.op.Login(t, b.Client, authURL), "")
	documented(http.MethodGet, AuthPrefix+"/corp/callback", cb.Status)
	r := b.Do(http.MethodPost, AuthPrefix+"/down", "")
	documented(http.MethodPost, AuthPrefix+"/down", r.Status)
	u, err := url.Parse(b.StartLogin("forged", ""))
	if err != nil {
		t.Fatal(err)
	}
	e.forged.SetIDToken(oidctest.Unsigned(t, e.forged.Claims(u.Query().Get("nonce"))))
	r = b.Do(http.MethodGet, AuthPrefix+"/forged/callback?code=c&state="+url.QueryEscape(u.Query().Get("state")), "")
	documented(http.MethodGet, AuthPrefix+"/forged/callback", r.Status)
	r = anon(t, e.AuthEnv).Do(http.MethodGet, AuthPrefix+"/forged/callback?code=c&state=s", "")
	documented(http.MethodGet, AuthPrefix+"/forged/callback", r.Status)
	if cb.Status != http.StatusSeeOther || r.Status != http.StatusBadRequest {
		t.Fatalf("login %d, callback without the state cookie %d", cb.Status, r.Status)
	}
}
