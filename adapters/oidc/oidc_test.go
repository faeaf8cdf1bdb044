package oidc_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/adapters/oidc/oidctest"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

const (
	clientID = "catsrv-web"
	secret   = "the-client-secret-of-the-catsrv-web-client"
	redirect = "http://127.0.0.1:9/api/v1/auth/corp/callback"
)

func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func newProvider(t *testing.T, issuer string) *oidc.Provider {
	t.Helper()
	p, err := oidc.New(oidc.Config{Name: "corp", Issuer: issuer, ClientID: clientID, ClientSecret: secret, RedirectURL: redirect})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// login runs the flow against the real provider and returns the code.
func login(t *testing.T, op *oidctest.OP, p *oidc.Provider, state, verifier, nonce string) string {
	t.Helper()
	authURL, err := p.AuthURL(t.Context(), state, verifier, nonce)
	if err != nil {
		t.Fatal(err)
	}
	back, err := url.Parse(op.Login(t, noRedirects(), authURL))
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != redirect || back.Query().Get("state") != state || back.Query().Get("code") == "" {
		t.Fatalf("the provider sent the browser back to %s", back)
	}
	return back.Query().Get("code")
}

// TestRealProviderLogin runs logins against a real OpenID Provider
// (zitadel/oidc op): the authorization request (PKCE S256, nonce, scopes),
// the code exchange, the verified ID token, userinfo for the email and
// name, a key rotation between two logins, and the provider's own
// refusals of a wrong PKCE verifier and of a nonce that is not the login's.
func TestRealProviderLogin(t *testing.T) {
	op := oidctest.NewOP(t, clientID, secret, redirect)
	p := newProvider(t, op.Issuer)
	verifier := strings.Repeat("v", 43)

	authURL, err := p.AuthURL(t.Context(), "state-1", verifier, "nonce-1")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") != "nonce-1" ||
		q.Get("scope") != "openid email profile" || q.Get("client_id") != clientID || q.Get("redirect_uri") != redirect || q.Get("response_type") != "code" {
		t.Fatalf("authorization request %s", authURL)
	}

	code := login(t, op, p, "state-1", verifier, "nonce-1")
	id, err := p.Exchange(t.Context(), code, verifier, "nonce-1")
	want := auth.Identity{Provider: "corp", Subject: oidctest.Subject, Email: oidctest.Email, Name: oidctest.Name}
	if err != nil || id != want {
		t.Fatalf("Exchange: %+v, %v; want %+v", id, err, want)
	}

	oldKey := op.KeyID()
	op.RotateKey()
	if op.KeyID() == oldKey {
		t.Fatal("the key did not rotate")
	}
	code = login(t, op, p, "state-2", verifier, "nonce-2")
	if id, err := p.Exchange(t.Context(), code, verifier, "nonce-2"); err != nil || id != want {
		t.Fatalf("Exchange after a key rotation: %+v, %v", id, err)
	}

	code = login(t, op, p, "state-3", verifier, "nonce-3")
	if _, err := p.Exchange(t.Context(), code, strings.Repeat("w", 43), "nonce-3"); errs.KindOf(err) != errs.KindUnauthorized {
		t.Fatalf("Exchange with another PKCE verifier: %v; want unauthorized", err)
	}
	code = login(t, op, p, "state-4", verifier, "nonce-4")
	if _, err := p.Exchange(t.Context(), code, verifier, "nonce-other"); errs.KindOf(err) != errs.KindUnauthorized ||
		!strings.Contains(errs.PublicMessage(err, ""), "nonce") {
		t.Fatalf("Exchange with another login's nonce: %v; want unauthorized for the nonce", err)
	}
}

// TestRefusedIDTokens: every ID token that must not sign anyone in is
// refused as unauthorized with its reason. The tokens come from a Forger
// (a real provider cannot be made to sign them), verified against its
// discovery and JWKS documents.
func TestRefusedIDTokens(t *testing.T) {
	f := oidctest.NewForger(t, clientID, secret)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const nonce = "the-nonce"
	with := func(kv ...any) map[string]any {
		c := f.Claims(nonce)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(c, kv[i].(string))
			} else {
				c[kv[i].(string)] = kv[i+1]
			}
		}
		return c
	}
	good := func(c map[string]any) string { return oidctest.Sign(t, c, f.Key, f.KeyID) }
	cases := []struct {
		name, token, reason string
	}{
		{"signed by another key", oidctest.Sign(t, f.Claims(nonce), other, f.KeyID), "signature"},
		{"signed by another key id", oidctest.Sign(t, f.Claims(nonce), other, "unknown-key"), "signature"},
		{"another audience", good(with("aud", "someone-else")), "audience"},
		{"expired", good(with("exp", time.Now().Add(-time.Minute).Unix(), "iat", time.Now().Add(-10*time.Minute).Unix())), "expired"},
		{"wrong nonce", good(with("nonce", "another-nonce")), "nonce"},
		{"missing nonce", good(with("nonce", nil)), "nonce"},
		{"alg none", oidctest.Unsigned(t, f.Claims(nonce)), "alg"},
		{"HS256 with the client secret", oidctest.SignHS256(t, f.Claims(nonce), secret), "HS256"},
		{"another issuer", good(with("iss", "https://evil.example.com")), "issued by a different provider"},
		{"no iat", good(with("iat", nil)), "iat"},
		{"iat in the future", good(with("iat", time.Now().Add(time.Hour).Unix())), "future"},
		{"several audiences without azp", good(with("aud", []string{clientID, "another"})), "azp"},
		{"azp of another client", good(with("aud", []string{clientID, "another"}, "azp", "another")), "azp"},
		{"no sub", good(with("sub", nil)), "sub"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, f.Issuer)
			f.SetIDToken(c.token)
			_, err := p.Exchange(t.Context(), "a-code", "a-verifier", nonce)
			if errs.KindOf(err) != errs.KindUnauthorized {
				t.Fatalf("Exchange: %v; want unauthorized", err)
			}
			if msg := errs.PublicMessage(err, ""); !strings.Contains(msg, "the ID token was refused") || !strings.Contains(msg, c.reason) {
				t.Fatalf("message %q does not give the reason %q", msg, c.reason)
			}
		})
	}

	t.Run("ES256", func(t *testing.T) {
		p := newProvider(t, f.Issuer)
		f.SetIDToken(oidctest.SignWith(t, f.Claims(nonce), jose.ES256, f.ECKey, f.ECKeyID))
		if id, err := p.Exchange(t.Context(), "a-code", "a-verifier", nonce); err != nil || id.Subject != oidctest.Subject {
			t.Fatalf("Exchange of an ES256 token: %+v, %v", id, err)
		}
	})
	t.Run("PS256 by the provider's own key", func(t *testing.T) {
		p := newProvider(t, f.Issuer)
		f.SetIDToken(oidctest.SignWith(t, f.Claims(nonce), jose.PS256, f.Key, f.KeyID))
		if _, err := p.Exchange(t.Context(), "a-code", "a-verifier", nonce); errs.KindOf(err) != errs.KindUnauthorized ||
			!strings.Contains(errs.PublicMessage(err, ""), "PS256") {
			t.Fatalf("Exchange of a PS256 token: %v; want unauthorized for the algorithm", err)
		}
	})
	t.Run("several audiences with this azp", func(t *testing.T) {
		p := newProvider(t, f.Issuer)
		f.SetIDToken(good(with("aud", []string{clientID, "another"}, "azp", clientID)))
		if id, err := p.Exchange(t.Context(), "a-code", "a-verifier", nonce); err != nil || id.Subject != oidctest.Subject {
			t.Fatalf("Exchange: %+v, %v", id, err)
		}
	})
	t.Run("userinfo of another subject", func(t *testing.T) {
		p := newProvider(t, f.Issuer)
		f.SetIDToken(good(with("email", nil, "name", nil)))
		f.SetUserinfoSubject("someone-else")
		defer f.SetUserinfoSubject(oidctest.Subject)
		if _, err := p.Exchange(t.Context(), "a-code", "a-verifier", nonce); errs.KindOf(err) != errs.KindUnauthorized ||
			!strings.Contains(errs.PublicMessage(err, ""), "userinfo") {
			t.Fatalf("Exchange: %v; want unauthorized for userinfo", err)
		}
	})
}

// TestTokenEndpointAuth: client_secret_basic when discovery offers it or
// says nothing, client_secret_post when that is all it offers, and no
// login when it offers neither.
func TestTokenEndpointAuth(t *testing.T) {
	f := oidctest.NewForger(t, clientID, secret)
	for _, c := range []struct {
		methods []string
		want    string
	}{
		{nil, "client_secret_basic"},
		{[]string{"client_secret_post", "client_secret_basic"}, "client_secret_basic"},
		{[]string{"private_key_jwt", "client_secret_post"}, "client_secret_post"},
	} {
		f.SetAuthMethods(c.methods...)
		f.SetIDToken(oidctest.Sign(t, f.Claims("n"), f.Key, f.KeyID))
		if _, err := newProvider(t, f.Issuer).Exchange(t.Context(), "a-code", "a-verifier", "n"); err != nil || f.AuthUsed() != c.want {
			t.Fatalf("methods %v: %v, used %q; want %s", c.methods, err, f.AuthUsed(), c.want)
		}
	}
	f.SetAuthMethods("private_key_jwt")
	if _, err := newProvider(t, f.Issuer).AuthURL(t.Context(), "s", "v", "n"); errs.KindOf(err) != errs.KindUnavailable {
		t.Fatalf("AuthURL with only private_key_jwt: %v; want unavailable", err)
	}
}

// TestDiscoveryFailures: a discovery document naming another issuer, or
// none at all, makes the provider unavailable; discovery is tried again
// at the next login, so a provider that was down works once it is up.
func TestDiscoveryFailures(t *testing.T) {
	f := oidctest.NewForger(t, clientID, secret)
	f.SetDiscoveredIssuer("https://other.example.com")
	p := newProvider(t, f.Issuer)
	_, err := p.AuthURL(t.Context(), "s", "v", "n")
	if errs.KindOf(err) != errs.KindUnavailable || !strings.Contains(errs.PublicMessage(err, ""), `names the issuer "https://other.example.com"`) {
		t.Fatalf("AuthURL with a foreign issuer: %v; want unavailable naming it", err)
	}

	f.SetDiscoveredIssuer(f.Issuer)
	f.SetDown(true)
	p = newProvider(t, f.Issuer)
	if err := p.Discover(t.Context()); errs.KindOf(err) != errs.KindUnavailable {
		t.Fatalf("Discover while down: %v; want unavailable", err)
	}
	if _, err := p.Exchange(t.Context(), "c", "v", "n"); errs.KindOf(err) != errs.KindUnavailable {
		t.Fatalf("Exchange while down: %v; want unavailable", err)
	}
	f.SetDown(false)
	if _, err := p.AuthURL(t.Context(), "s", "v", "n"); err != nil {
		t.Fatalf("AuthURL once the provider is up: %v", err)
	}
}

// TestNewChecks refuses incomplete or unsafe settings.
func TestNewChecks(t *testing.T) {
	ok := oidc.Config{Name: "corp", Issuer: "https://id.example.com", ClientID: "c", ClientSecret: "s", RedirectURL: redirect}
	if _, err := oidc.New(ok); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*oidc.Config){
		"no name":           func(c *oidc.Config) { c.Name = "" },
		"no client id":      func(c *oidc.Config) { c.ClientID = "" },
		"no secret":         func(c *oidc.Config) { c.ClientSecret = "" },
		"http issuer":       func(c *oidc.Config) { c.Issuer = "http://id.example.com" },
		"issuer query":      func(c *oidc.Config) { c.Issuer = "https://id.example.com/?x=1" },
		"no issuer":         func(c *oidc.Config) { c.Issuer = "" },
		"relative redirect": func(c *oidc.Config) { c.RedirectURL = "/cb" },
	} {
		c := ok
		change(&c)
		if _, err := oidc.New(c); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("%s: %v; want invalid", name, err)
		}
	}
	if err := oidc.CheckIssuer("http://127.0.0.1:5556/dex"); err != nil {
		t.Errorf("a loopback http issuer: %v", err)
	}
}
