package apitest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/catsrv/catsrv/core/auth"
)

// IDPUser is who logs in at a fake identity provider.
type IDPUser struct{ ID, Email, Name string }

// FakeIDP is a local identity provider speaking the protocol of one of the
// three providers on the paths catsrv calls after rewriting goth's hosts:
// provider_a (/authorize, /token with the user in the token response),
// provider_b (Google: /o/oauth2/auth, /token, /oauth2/v2/userinfo) and
// provider_c (Azure AD v2: /<tenant>/oauth2/v2.0/authorize, …/token,
// Graph /v1.0/me). Logging in is simulated: the authorize endpoint
// redirects at once with a code for the configured user.
type FakeIDP struct {
	T            testing.TB
	Provider     string
	ClientID     string
	Secret       string
	Tenant       string
	User         IDPUser
	Srv          *httptest.Server
	mu           sync.Mutex
	codes        map[string]grant
	accessTokens map[string]IDPUser
	// authorizeQueries records every authorize request's query.
	AuthorizeQueries []url.Values
}

type grant struct {
	User        IDPUser
	redirectURI string
	challenge   string
}

// NewFakeIDP starts the identity provider of provider, which logs user in.
func NewFakeIDP(t testing.TB, provider string, user IDPUser) *FakeIDP {
	f := &FakeIDP{T: t, Provider: provider, ClientID: "client-" + provider, Secret: "secret-" + provider,
		Tenant: "contoso.example", User: user, codes: map[string]grant{}, accessTokens: map[string]IDPUser{}}
	mux := http.NewServeMux()
	switch provider {
	case auth.ProviderA:
		mux.HandleFunc("GET /authorize", f.authorize)
		mux.HandleFunc("POST /token", f.Token)
	case auth.ProviderB:
		mux.HandleFunc("GET /o/oauth2/auth", f.authorize)
		mux.HandleFunc("POST /token", f.Token)
		mux.HandleFunc("GET /oauth2/v2/userinfo", f.userinfo)
	case auth.ProviderC:
		mux.HandleFunc("GET /"+f.Tenant+"/oauth2/v2.0/authorize", f.authorize)
		mux.HandleFunc("POST /"+f.Tenant+"/oauth2/v2.0/token", f.Token)
		mux.HandleFunc("GET /v1.0/me", f.userinfo)
	}
	f.Srv = httptest.NewServer(mux)
	t.Cleanup(f.Srv.Close)
	return f
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (f *FakeIDP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.AuthorizeQueries = append(f.AuthorizeQueries, q)
	if q.Get("client_id") != f.ClientID || q.Get("response_type") != "code" || q.Get("state") == "" {
		f.mu.Unlock()
		http.Error(w, "bad authorize request", http.StatusBadRequest)
		return
	}
	code := "code-" + randomHex()
	f.codes[code] = grant{User: f.User, redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	f.mu.Unlock()
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	back := to.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	to.RawQuery = back.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound) //nolint:gosec // G710: a test provider sends the browser where the test's login asked
}

// Token checks the client's credentials (form or basic auth), the code (one
// use), the redirect URI and, for provider_a, the PKCE verifier.
func (f *FakeIDP) Token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	f.mu.Lock()
	g, found := f.codes[r.PostForm.Get("code")]
	delete(f.codes, r.PostForm.Get("code"))
	f.mu.Unlock()
	fail := func(msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": msg})
	}
	switch {
	case id != f.ClientID || secret != f.Secret:
		fail("bad client credentials")
		return
	case !found:
		fail("unknown or used code")
		return
	case r.PostForm.Get("redirect_uri") != g.redirectURI:
		fail("redirect_uri mismatch")
		return
	case f.Provider == auth.ProviderA && !pkceMatches(r.PostForm.Get("code_verifier"), g.challenge):
		fail("PKCE verifier mismatch")
		return
	}
	access := "at-" + randomHex()
	f.mu.Lock()
	f.accessTokens[access] = g.User
	f.mu.Unlock()
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600}
	if f.Provider == auth.ProviderA {
		body["user"] = map[string]string{"id": g.User.ID, "email": g.User.Email, "name": g.User.Name}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return verifier != "" && base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

// userinfo answers Google's userinfo (?access_token=) and Graph's /me
// (Authorization: Bearer).
func (f *FakeIDP) userinfo(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("access_token")
	if tok == "" {
		tok = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	f.mu.Lock()
	u, ok := f.accessTokens[tok]
	f.mu.Unlock()
	if !ok {
		http.Error(w, "unknown token", http.StatusUnauthorized)
		return
	}
	body := map[string]string{"id": u.ID, "email": u.Email, "name": u.Name}
	if f.Provider == auth.ProviderC {
		body = map[string]string{"id": u.ID, "mail": u.Email, "displayName": u.Name}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
