package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// AccessToken is the access token a Forger's token endpoint answers and
// its userinfo endpoint takes.
const AccessToken = "forged-access-token"

// Forger is a provider whose ID tokens the test writes: a discovery
// document, a JWKS document with its key and a token endpoint with the
// real shapes, answering the code grant with the ID token set by SetIDToken.
type Forger struct {
	Srv      *httptest.Server
	Issuer   string
	ClientID string
	Secret   string
	// Key is the RSA key the JWKS publishes, with id KeyID; ECKey the
	// P-256 key it publishes too, with id ECKeyID.
	Key     *rsa.PrivateKey
	KeyID   string
	ECKey   *ecdsa.PrivateKey
	ECKeyID string

	mu          sync.Mutex
	idToken     string
	discovered  string   // the issuer the discovery document names
	authMethods []string // token_endpoint_auth_methods_supported
	authUsed    string   // how the last token request authenticated
	infoSub     string
	down        bool
}

// NewForger serves a Forger until the test ends.
func NewForger(t testing.TB, clientID, secret string) *Forger {
	t.Helper()
	key := rsaKey(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &Forger{ClientID: clientID, Secret: secret, Key: key, KeyID: "forger-key", ECKey: ec, ECKeyID: "forger-ec-key", infoSub: Subject}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", f.discovery)
	mux.HandleFunc("GET /jwks", f.jwks)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /userinfo", f.userinfo)
	f.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		down := f.down
		f.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Srv.Close)
	f.Issuer = f.Srv.URL
	f.discovered = f.Issuer
	return f
}

// SetIDToken sets the ID token of the next token responses.
func (f *Forger) SetIDToken(tok string) { f.mu.Lock(); f.idToken = tok; f.mu.Unlock() }

// SetDiscoveredIssuer makes the discovery document name another issuer.
func (f *Forger) SetDiscoveredIssuer(iss string) { f.mu.Lock(); f.discovered = iss; f.mu.Unlock() }

// SetAuthMethods sets token_endpoint_auth_methods_supported (nil: absent).
func (f *Forger) SetAuthMethods(m ...string) { f.mu.Lock(); f.authMethods = m; f.mu.Unlock() }

// SetUserinfoSubject sets the sub userinfo answers.
func (f *Forger) SetUserinfoSubject(sub string) { f.mu.Lock(); f.infoSub = sub; f.mu.Unlock() }

// SetDown makes every endpoint answer 502 (down true) or serve again.
func (f *Forger) SetDown(down bool) { f.mu.Lock(); f.down = down; f.mu.Unlock() }

// AuthUsed is how the last token request authenticated the client:
// "client_secret_basic", "client_secret_post" or "".
func (f *Forger) AuthUsed() string { f.mu.Lock(); defer f.mu.Unlock(); return f.authUsed }

// Claims are the claims of a valid ID token for the login with nonce.
func (f *Forger) Claims(nonce string) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": f.Issuer, "sub": Subject, "aud": f.ClientID, "exp": now.Add(5 * time.Minute).Unix(),
		"iat": now.Unix(), "email": Email, "name": Name}
	if nonce != "" {
		c["nonce"] = nonce
	}
	return c
}

// Sign signs claims with key under the key id kid, RS256.
func Sign(t testing.TB, claims map[string]any, key *rsa.PrivateKey, kid string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, s, claims)
}

// SignWith signs claims with key under the key id kid and the algorithm
// alg (ES256 with an ECDSA key, PS256 with an RSA one, …).
func SignWith(t testing.TB, claims map[string]any, alg jose.SignatureAlgorithm, key any, kid string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, s, claims)
}

// SignHS256 signs claims with a shared secret (a client secret), HS256.
func SignHS256(t testing.TB, claims map[string]any, secret string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(secret)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, s, claims)
}

// Unsigned is claims as a JWT with alg none and no signature.
func Unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
}

func sign(t testing.TB, s jose.Signer, claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *Forger) discovery(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	doc := map[string]any{
		"issuer": f.discovered, "authorization_endpoint": f.Issuer + "/authorize", "token_endpoint": f.Issuer + "/token",
		"userinfo_endpoint": f.Issuer + "/userinfo", "jwks_uri": f.Issuer + "/jwks",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	}
	if f.authMethods != nil {
		doc["token_endpoint_auth_methods_supported"] = f.authMethods
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, doc)
}

func (f *Forger) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &f.Key.PublicKey, KeyID: f.KeyID, Use: "sig"},
		{Key: &f.ECKey.PublicKey, KeyID: f.ECKeyID, Algorithm: "ES256", Use: "sig"},
	}})
}

func (f *Forger) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("code") == "" || r.PostForm.Get("code_verifier") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	used := ""
	if id, secret, ok := r.BasicAuth(); ok && id == f.ClientID && secret == f.Secret {
		used = "client_secret_basic"
	} else if r.PostForm.Get("client_id") == f.ClientID && r.PostForm.Get("client_secret") == f.Secret {
		used = "client_secret_post"
	}
	f.mu.Lock()
	f.authUsed = used
	tok := f.idToken
	f.mu.Unlock()
	if used == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": AccessToken, "token_type": "Bearer", "expires_in": 300, "id_token": tok})
}

func (f *Forger) userinfo(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+AccessToken {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
		return
	}
	f.mu.Lock()
	sub := f.infoSub
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"sub": sub, "email": Email, "name": Name})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
