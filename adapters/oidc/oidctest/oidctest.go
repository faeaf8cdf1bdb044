// Package oidctest serves OpenID Providers in a test process, for the
// tests of the oidc adapter, of the HTTP app and of the dashboard:
//
//   - OP is a real provider: github.com/zitadel/oidc/v3's op package (a
//     certified OpenID Provider library) with its example in-memory storage
//     and username/password login page, plus a signing key that a test can
//     rotate. The whole login flow runs against it.
//   - Forger serves what the refusal tests need and no real provider can be
//     made to do: ID tokens signed by another key, for another audience,
//     expired, with a wrong or no nonce, with alg none or HS256. It keeps
//     the real shapes (a discovery document, a JWKS document, a token
//     endpoint answering the code grant), built with go-jose.
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The user every OP knows (the example storage's first user).
const (
	Subject  = "id1"
	Email    = "test-user@zitadel.ch"
	Name     = "Test User"
	Password = "verysecure"
)

// OP is a real OpenID Provider served over HTTP on loopback.
type OP struct {
	Srv      *httptest.Server
	Issuer   string
	ClientID string
	Secret   string
	keys     *rotating
}

// NewOP serves an OpenID Provider with one confidential web client
// (client_secret_basic) allowed to redirect to redirectURIs, until the
// test ends.
func NewOP(t testing.TB, clientID, secret string, redirectURIs ...string) *OP {
	t.Helper()
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	issuer := srv.URL
	clients := map[string]*storage.Client{clientID: storage.WebClient(clientID, secret, redirectURIs...)}
	st := &rotating{Storage: storage.NewStorageWithClients(storage.NewUserStore(issuer), clients), t: t}
	st.Rotate()
	handler = exampleop.SetupServer(issuer, st, nil, false)
	return &OP{Srv: srv, Issuer: issuer, ClientID: clientID, Secret: secret, keys: st}
}

// Username is the login name of the OP's user.
func (o *OP) Username() string {
	u, _ := url.Parse(o.Issuer)
	return "test-user@" + u.Hostname()
}

// RotateKey replaces the OP's signing key by a new one with a new key id:
// tokens signed after it verify only against the new JWKS.
func (o *OP) RotateKey() { o.keys.Rotate() }

// KeyID is the id of the current signing key.
func (o *OP) KeyID() string { return o.keys.current().id }

// Login does what the user does at the provider: it follows the
// authorization URL to the login page, posts the username and password,
// and returns the URL the provider redirects the browser back to (the
// client's redirect URI with code and state). c must not follow
// redirects.
func (o *OP) Login(t testing.TB, c *http.Client, authURL string) string {
	t.Helper()
	loc := authURL
	for range 5 {
		if strings.Contains(loc, "/login/username") {
			break
		}
		loc = redirect(t, c, http.MethodGet, loc, nil)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	id := u.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the provider did not send the browser to its login page: %s", loc)
	}
	form := url.Values{"id": {id}, "username": {o.Username()}, "password": {Password}}
	next := redirect(t, c, http.MethodPost, o.Issuer+"/login/username", form)
	for range 5 {
		if !strings.HasPrefix(next, o.Issuer) {
			return next
		}
		next = redirect(t, c, http.MethodGet, next, nil)
	}
	t.Fatalf("the provider kept redirecting to itself: %s", next)
	return ""
}

// redirect makes one request and returns its redirect target.
func redirect(t testing.TB, c *http.Client, method, target string, form url.Values) string {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(context.Background(), method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 3 {
		t.Fatalf("%s %s: status %d, not a redirect: %s", method, target, res.StatusCode, text)
	}
	loc, err := res.Request.URL.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc.String()
}

// rotating is the example storage with a signing key that can change.
type rotating struct {
	*storage.Storage
	t   testing.TB // whose end gives the keys back (rsaKey)
	mu  sync.Mutex
	key *signingKey
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.key.PublicKey }

// Rotate makes a new key current; the JWKS lists only it.
func (s *rotating) Rotate() {
	key := rsaKey(s.t)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = &signingKey{id: fmt.Sprintf("key-%x", b), key: key}
}

func (s *rotating) current() *signingKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// SigningKey implements op.Storage.
func (s *rotating) SigningKey(context.Context) (op.SigningKey, error) { return s.current(), nil }

// SignatureAlgorithms implements op.Storage.
func (s *rotating) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage.
func (s *rotating) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{s.current()}}, nil
}
