package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/oauth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

func config(base string) oauth.Config {
	return oauth.Config{ClientID: "cid", ClientSecret: "key", RedirectURL: "https://cat.example/cb", BaseURL: base}
}

// TestAuthURLs checks each provider's authorization URL: moved onto the
// configured base (path prefix kept), with the OAuth parameters.
func TestAuthURLs(t *testing.T) {
	cases := []struct {
		name     string
		build    func() (ports.IdentityProvider, error)
		wantPath string
		pkce     bool
	}{
		{"provider_a", func() (ports.IdentityProvider, error) {
			return oauth.NewProviderA(config("https://sso.example/prefix/"))
		}, "https://sso.example/prefix/authorize", true},
		{"provider_b at Google", func() (ports.IdentityProvider, error) { return oauth.NewProviderB(config("")) }, "https://accounts.google.com/o/oauth2/auth", false},
		{"provider_b elsewhere", func() (ports.IdentityProvider, error) { return oauth.NewProviderB(config("http://127.0.0.1:9/idp")) }, "http://127.0.0.1:9/idp/o/oauth2/auth", false},
		{"provider_c at Microsoft", func() (ports.IdentityProvider, error) { return oauth.NewProviderC(config(""), "contoso.example") },
			"https://login.microsoftonline.com/contoso.example/oauth2/v2.0/authorize", false},
		{"provider_c elsewhere", func() (ports.IdentityProvider, error) {
			return oauth.NewProviderC(config("http://idp.test"), "tenant-1")
		},
			"http://idp.test/tenant-1/oauth2/v2.0/authorize", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.build()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := p.AuthURL(t.Context(), "the-state", "the-verifier-the-verifier-the-verifier-123", "")
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if got := u.Scheme + "://" + u.Host + u.Path; got != c.wantPath {
				t.Errorf("endpoint %s, want %s", got, c.wantPath)
			}
			if q.Get("client_id") != "cid" || q.Get("redirect_uri") != "https://cat.example/cb" || q.Get("response_type") != "code" || q.Get("state") != "the-state" {
				t.Errorf("query %v", q)
			}
			if (q.Get("code_challenge") != "") != c.pkce || (c.pkce && q.Get("code_challenge_method") != "S256") {
				t.Errorf("PKCE %v, want %v: %v", q.Get("code_challenge"), c.pkce, q)
			}
		})
	}
}

// TestConfiguredScopes: each of the three sends the scopes it is
// configured with (CATSRV_PROVIDER_<A|B|C>_SCOPES).
func TestConfiguredScopes(t *testing.T) {
	c := config("http://127.0.0.1:9/idp")
	c.Scopes = []string{"openid", "email", "groups"}
	builds := map[string]func() (ports.IdentityProvider, error){
		"provider_a": func() (ports.IdentityProvider, error) { return oauth.NewProviderA(c) },
		"provider_b": func() (ports.IdentityProvider, error) { return oauth.NewProviderB(c) },
		"provider_c": func() (ports.IdentityProvider, error) { return oauth.NewProviderC(c, "tenant-1") },
	}
	for name, build := range builds {
		p, err := build()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := p.AuthURL(t.Context(), "s", "the-verifier-the-verifier-the-verifier-123", "")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(raw)
		if got := u.Query().Get("scope"); got != "openid email groups" {
			t.Errorf("%s: scope %q, want the configured openid email groups", name, got)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	cases := []struct {
		name  string
		build func() (ports.IdentityProvider, error)
		msg   string
	}{
		{"no client id", func() (ports.IdentityProvider, error) {
			c := config("")
			c.ClientID = ""
			return oauth.NewProviderB(c)
		}, "client id"},
		{"no secret", func() (ports.IdentityProvider, error) {
			c := config("")
			c.ClientSecret = ""
			return oauth.NewProviderB(c)
		}, "client secret"},
		{"no redirect", func() (ports.IdentityProvider, error) {
			c := config("")
			c.RedirectURL = ""
			return oauth.NewProviderB(c)
		}, "redirect URI"},
		{"provider_a without base", func() (ports.IdentityProvider, error) { return oauth.NewProviderA(config("")) }, "base URL"},
		{"bad base", func() (ports.IdentityProvider, error) { return oauth.NewProviderB(config("ftp://x")) }, "base URL"},
		{"tenant with a path", func() (ports.IdentityProvider, error) { return oauth.NewProviderC(config(""), "a/../b") }, "tenant"},
		{"no tenant", func() (ports.IdentityProvider, error) { return oauth.NewProviderC(config(""), "") }, "tenant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.build(); errs.KindOf(err) != errs.KindInvalid || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want invalid about %s", err, c.msg)
			}
		})
	}
}

func TestExchangeFailures(t *testing.T) {
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/refuse/token":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
		case "/nouser/token":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "user": map[string]string{"email": "x@y"}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer idp.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	cases := []struct {
		name, base, code string
		kind             errs.Kind
	}{
		{"refused code", idp.URL + "/refuse", "c", errs.KindUnauthorized},
		{"no user id", idp.URL + "/nouser", "c", errs.KindUnauthorized},
		{"unreachable", downURL, "c", errs.KindUnavailable},
		{"no code", idp.URL + "/refuse", "", errs.KindInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := oauth.NewProviderA(config(c.base))
			if err != nil {
				t.Fatal(err)
			}
			id, err := p.Exchange(t.Context(), c.code, "v", "")
			if errs.KindOf(err) != c.kind {
				t.Fatalf("Exchange = %+v, %v; want kind %v", id, err, c.kind)
			}
			if strings.Contains(errs.PublicMessage(err, ""), "invalid_grant") {
				t.Error("the provider's answer leaked into the client message")
			}
		})
	}
}

func TestUnreachableUserEndpointKeepsTokenOutOfErrors(t *testing.T) {
	userinfo := make(chan string, 1)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"secret-access-token","token_type":"Bearer","expires_in":3600}`))
	}))
	defer idp.Close()
	// The token endpoint answers; the user endpoint hangs up, so goth's
	// userinfo call fails with a URL error whose URL holds the token.
	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/token") {
			idp.Config.Handler.ServeHTTP(w, r)
			return
		}
		// The transport retries a GET whose connection was hung up: a
		// retry must not block on the full channel until the client's
		// time-out.
		select {
		case userinfo <- r.URL.RawQuery:
		default:
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("cannot hijack")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	defer hangup.Close()
	p, err := oauth.NewProviderB(config(hangup.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Exchange(t.Context(), "code", "", "")
	var query string
	select {
	case query = <-userinfo:
	default:
	}
	if errs.KindOf(err) != errs.KindUnavailable || !strings.Contains(query, "secret-access-token") {
		t.Fatalf("error %v (userinfo query %q), want unavailable after a userinfo call", err, query)
	}
	if strings.Contains(err.Error(), "secret-access-token") {
		t.Fatalf("the provider's access token is in the error: %v", err)
	}
}
