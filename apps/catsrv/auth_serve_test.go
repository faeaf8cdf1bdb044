package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/oidc/oidctest"
)

// fakeGoogle is a local stand-in for provider_b on Google's paths: the
// authorize endpoint logs the user in at once.
func fakeGoogle(t *testing.T, clientID, secret string) *httptest.Server {
	codes := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /o/oauth2/auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != clientID {
			http.Error(w, "unknown client", http.StatusBadRequest)
			return
		}
		codes["code-1"] = q.Get("redirect_uri")
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"code-1"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		// Google's endpoint takes the client's credentials in the form.
		err := r.ParseForm()
		id, sec := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		if err != nil || id != clientID || sec != secret || codes[r.PostForm.Get("code")] == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		delete(codes, r.PostForm.Get("code"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"google-at","token_type":"Bearer","expires_in":3600}`)
	})
	mux.HandleFunc("GET /oauth2/v2/userinfo", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("access_token") != "google-at" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"g-1","email":"gina@example.com","name":"Gina"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestServeLogin drives the real binary: a provider_b login against a
// local provider, the session cookie on /memory, and the audit command.
func TestServeLogin(t *testing.T) {
	t.Parallel()
	idp := fakeGoogle(t, "gclient", "gsecret")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "shop.yaml"), []byte("security:\n  providers:\n    provider_a: {enabled: true}\n    provider_b: {enabled: true}\n  cors:\n    allowed_origins: [\"https://app.example.com\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	srv := startServeOnFreePort(t, cfg, db, "CATSRV_COOKIE_INSECURE=true",
		"CATSRV_PROVIDER_B_CLIENT_ID=gclient", "CATSRV_PROVIDER_B_CLIENT_SECRET=gsecret", "CATSRV_PROVIDER_B_BASE_URL="+idp.URL)
	base := srv.base

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, target, body string, header ...string) (int, string, http.Header) {
		t.Helper()
		return send(t, client, method, target, body, header...)
	}

	code, body, _ := do(http.MethodPost, base+"/api/v1/auth/provider_a", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not configured") {
		t.Fatalf("unconfigured provider_a: %d %s", code, body)
	}
	code, body, _ = do(http.MethodPost, base+"/api/v1/auth/provider_b", "")
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &start); code != http.StatusOK || err != nil || !strings.HasPrefix(start.AuthorizationURL, idp.URL) {
		t.Fatalf("start: %d %s", code, body)
	}
	code, _, h := do(http.MethodGet, start.AuthorizationURL, "")
	if code != http.StatusFound || !strings.HasPrefix(h.Get("Location"), base+"/api/v1/auth/provider_b/callback?") {
		t.Fatalf("identity provider: %d, Location %s", code, h.Get("Location"))
	}
	if code, body, _ = do(http.MethodGet, h.Get("Location"), ""); code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s\n%s", code, body, srv.logs.String())
	}
	if code, body, _ = do(http.MethodPost, base+"/api/v1/auth/memory", `{"preferences":{"tone":"brief"}}`, "Origin", "https://app.example.com"); code != http.StatusOK {
		t.Fatalf("POST /memory: %d %s", code, body)
	}
	if code, body, _ = do(http.MethodGet, base+"/api/v1/auth/memory", ""); code != http.StatusOK || !strings.Contains(body, `"tone":"brief"`) {
		t.Fatalf("GET /memory: %d %s", code, body)
	}
	if code, body, _ = do(http.MethodPost, base+"/api/v1/auth/logout", "", "Origin", base); code != http.StatusOK {
		t.Fatalf("logout: %d %s", code, body)
	}

	audit := catsrv(t, nil, nil, "audit", "--db", db)
	for _, event := range []string{"provider_disabled", "login_start", "login_success", "logout"} {
		if !strings.Contains(audit.stdout, event) {
			t.Errorf("audit output lacks %s:\n%s", event, audit.stdout)
		}
	}
	for _, secret := range []string{"gsecret", "google-at", testSecret} {
		if strings.Contains(srv.logs.String(), secret) {
			t.Errorf("the server logged %q", secret)
		}
	}
}

// TestServeOIDCLogin drives the real binary with two generic OpenID
// Connect providers: corp, a real OpenID Provider in this test process
// (zitadel/oidc op), and down, whose issuer nobody serves. serve starts
// without waiting for either; the listing shows corp's display name; down
// answers 503 (audited) while corp's whole login works, and CATSRV_ADMINS
// makes corp's user an admin.
func TestServeOIDCLogin(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	op := oidctest.NewOP(t, "catsrv", "the-corp-client-secret", base+"/api/v1/auth/corp/callback")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "shop.yaml"), []byte("security:\n  providers:\n    corp: {enabled: true}\n    down: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	srv := startServeAt(t, addr, cfg, db, "CATSRV_COOKIE_INSECURE=true", "CATSRV_OIDC_PROVIDERS=corp,down",
		"CATSRV_PROVIDER_CORP_ISSUER="+op.Issuer, "CATSRV_PROVIDER_CORP_CLIENT_ID=catsrv",
		"CATSRV_PROVIDER_CORP_CLIENT_SECRET=the-corp-client-secret", "CATSRV_PROVIDER_CORP_DISPLAY_NAME=Corp SSO",
		"CATSRV_PROVIDER_DOWN_ISSUER=http://"+freeAddr(t), "CATSRV_PROVIDER_DOWN_CLIENT_ID=x", "CATSRV_PROVIDER_DOWN_CLIENT_SECRET=the-down-client-secret",
		"CATSRV_ADMINS=corp:"+oidctest.Subject)

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, body, _ := send(t, client, http.MethodGet, base+"/api/v1/auth/providers", "")
	if code != http.StatusOK || !strings.Contains(body, `{"name":"corp","display_name":"Corp SSO","start_url":"/api/v1/auth/corp?catname=shop"}`) ||
		!strings.Contains(body, `"name":"down"`) {
		t.Fatalf("GET /providers: %d %s", code, body)
	}
	if code, body, _ = send(t, client, http.MethodPost, base+"/api/v1/auth/down", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "discovery document") {
		t.Fatalf("start with an unreachable provider: %d %s", code, body)
	}

	code, body, _ = send(t, client, http.MethodPost, base+"/api/v1/auth/corp", "")
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &start); code != http.StatusOK || err != nil || !strings.HasPrefix(start.AuthorizationURL, op.Issuer) {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, body, _ = send(t, client, http.MethodGet, op.Login(t, client, start.AuthorizationURL), ""); code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s\n%s", code, body, srv.logs.String())
	}
	var access string
	for _, c := range jar.Cookies(&url.URL{Scheme: "http", Host: addr, Path: "/"}) {
		if c.Name == "catsrv_access" {
			access = c.Value
		}
	}
	parts := strings.Split(access, ".")
	if len(parts) != 3 {
		t.Fatalf("no access cookie after the login: %q", access)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !strings.Contains(string(payload), `"role":"admin"`) {
		t.Fatalf("corp's user (in CATSRV_ADMINS) got the claims %s, %v", payload, err)
	}
	if code, body, _ = send(t, client, http.MethodGet, base+"/api/v1/auth/memory", ""); code != http.StatusOK {
		t.Fatalf("GET /memory: %d %s", code, body)
	}

	audit := catsrv(t, nil, nil, "audit", "--db", db, "--json")
	for _, want := range []string{`"event":"login_failure","provider":"down"`, `"event":"login_success"`, `"provider":"corp"`} {
		if !strings.Contains(audit.stdout, want) {
			t.Errorf("audit output lacks %s:\n%s", want, audit.stdout)
		}
	}
	for _, secret := range []string{"the-corp-client-secret", "the-down-client-secret", testSecret} {
		if strings.Contains(srv.logs.String(), secret) {
			t.Errorf("the server logged %q", secret)
		}
	}
}
