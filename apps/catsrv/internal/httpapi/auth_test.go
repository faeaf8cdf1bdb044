package httpapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
)

// TestLoginFlows runs each provider's whole flow through the HTTP app
// against its local identity provider: start, authorization URL,
// simulated login, callback, cookies, /memory, refresh, logout, and the
// old tokens refused.
func TestLoginFlows(t *testing.T) {
	for _, p := range auth.Providers {
		t.Run(p, func(t *testing.T) {
			e := newAuthEnv(t)
			b := e.browser(t)
			idp := e.idps[p]

			authURL := b.startLogin(p, "")
			u, err := url.Parse(authURL)
			if err != nil || !strings.HasPrefix(authURL, idp.srv.URL+"/") {
				t.Fatalf("authorization URL %q does not point at the identity provider %s", authURL, idp.srv.URL)
			}
			q := u.Query()
			wantRedirect := e.srv.URL + authPrefix + "/" + p + "/callback"
			if q.Get("client_id") != idp.clientID || q.Get("redirect_uri") != wantRedirect || q.Get("response_type") != "code" || len(q.Get("state")) < 40 {
				t.Fatalf("authorization URL query %v", q)
			}
			if p == auth.ProviderA && (q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256") {
				t.Fatalf("provider_a must use PKCE: %v", q)
			}
			if b.cookie(stateCookieFor+p, authPrefix+"/"+p+"/callback") == "" {
				t.Fatal("no login state cookie after start")
			}

			cb := b.do(http.MethodGet, b.loginAtIDP(authURL), "")
			if cb.status != http.StatusSeeOther || cb.header.Get("Location") != postLoginURL {
				t.Fatalf("callback: status %d, Location %q, body %s", cb.status, cb.header.Get("Location"), cb.body)
			}
			access, refresh := b.cookie("catsrv_access", "/"), b.cookie("catsrv_refresh", authPrefix+"/refresh")
			if access == "" || refresh == "" {
				t.Fatalf("session cookies missing after callback: %v", cb.cookies)
			}
			if b.cookie(stateCookieFor+p, authPrefix+"/"+p+"/callback") != "" {
				t.Error("login state cookie kept after the callback")
			}
			claims, err := e.tokens.Verify(access)
			if err != nil || claims.Role != auth.RoleUser || !claims.ExpiresAt.Equal(now.Add(2*time.Hour)) {
				t.Fatalf("access token: %+v, %v; want role user, 2 hours (the CAT's expiration_hours)", claims, err)
			}
			user, err := e.store.User(t.Context(), claims.Subject)
			if err != nil || user.Provider != p || user.Subject != idp.user.id || user.Email != idp.user.email || user.Name != idp.user.name {
				t.Fatalf("stored user %+v, %v; want %s's %+v", user, err, p, idp.user)
			}

			// The cookie authenticates /memory; writes need the origin check.
			if r := b.do(http.MethodGet, authPrefix+"/memory", ""); r.status != 200 || string(r.body) != "{\"preferences\":{},\"updated_at\":null}\n" {
				t.Fatalf("GET /memory: %d %s", r.status, r.body)
			}
			if r := b.do(http.MethodPost, authPrefix+"/memory", `{"preferences":{"lang":"fr"}}`, b.sameOrigin()...); r.status != 200 {
				t.Fatalf("POST /memory: %d %s", r.status, r.body)
			}
			bearer := anon(t, e)
			if r := bearer.do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+access); r.status != 200 || !strings.Contains(string(r.body), `"lang":"fr"`) {
				t.Fatalf("GET /memory with the bearer token: %d %s", r.status, r.body)
			}

			e.clock.Advance(time.Minute)
			r := b.do(http.MethodPost, authPrefix+"/refresh", "", b.sameOrigin()...)
			if r.status != 200 {
				t.Fatalf("refresh: %d %s", r.status, r.body)
			}
			access2, refresh2 := b.cookie("catsrv_access", "/"), b.cookie("catsrv_refresh", authPrefix+"/refresh")
			if access2 == access || refresh2 == refresh || r.json(t)["access_token"] != access2 {
				t.Fatalf("refresh did not rotate both tokens: %s", r.body)
			}

			if r := b.do(http.MethodPost, authPrefix+"/logout", "", b.sameOrigin()...); r.status != 200 {
				t.Fatalf("logout: %d %s", r.status, r.body)
			}
			if b.cookie("catsrv_access", "/") != "" || b.cookie("catsrv_refresh", authPrefix+"/refresh") != "" {
				t.Error("logout left session cookies")
			}
			for name, tok := range map[string]string{"access before refresh": access, "access after refresh": access2} {
				if r := bearer.do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+tok); r.status != http.StatusUnauthorized {
					t.Errorf("%s after logout: %d %s, want 401", name, r.status, r.body)
				}
			}
			for name, tok := range map[string]string{"rotated": refresh, "current": refresh2} {
				if r := bearer.do(http.MethodPost, authPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`); r.status != http.StatusUnauthorized {
					t.Errorf("%s refresh token after logout: %d %s, want 401", name, r.status, r.body)
				}
			}
			if r := b.do(http.MethodPost, authPrefix+"/logout", "", b.sameOrigin()...); r.status != 200 {
				t.Errorf("second logout: %d %s, want 200", r.status, r.body)
			}
			assertAudit(t, e, auth.AuditLoginStart, auth.AuditLoginSuccess, auth.AuditRefresh, auth.AuditLogout)
		})
	}
}

// anon is a client that keeps no cookies, for bearer-token and body calls.
func anon(t *testing.T, e *authEnv) *browser {
	b := e.browser(t)
	b.client.Jar = nil
	return b
}

// assertAudit checks that the audit log holds each kind at least once,
// with the request's IP.
func assertAudit(t *testing.T, e *authEnv, kinds ...auth.AuditKind) {
	t.Helper()
	events, err := e.store.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		i := slices.IndexFunc(events, func(ev auth.AuditEvent) bool { return ev.Kind == k })
		if i < 0 {
			t.Errorf("audit log has no %s event: %+v", k, events)
			continue
		}
		if events[i].IP != "127.0.0.1" || events[i].Time.IsZero() {
			t.Errorf("%s event %+v: want IP 127.0.0.1 and a time", k, events[i])
		}
	}
}

func TestCallbackJSON(t *testing.T) {
	e := newAuthEnv(t)
	b := e.browser(t)
	r := b.login(auth.ProviderB, "Accept", "application/json")
	if r.status != 200 {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	body := r.json(t)
	user, _ := body["user"].(map[string]any)
	if body["access_token"] != b.cookie("catsrv_access", "/") || body["token_type"] != "Bearer" || body["expires_in"] != float64(7200) ||
		user["email"] != "bob@b.example" || user["provider"] != auth.ProviderB {
		t.Fatalf("body %s", r.body)
	}
	if _, leaked := body["refresh_token"]; leaked {
		t.Error("the refresh token must stay in its cookie")
	}
}

func TestRefreshReuseRevokesFamily(t *testing.T) {
	e := newAuthEnv(t)
	b := e.browser(t)
	b.login(auth.ProviderA)
	first := b.cookie("catsrv_refresh", authPrefix+"/refresh")
	api := anon(t, e)
	refresh := func(tok string) reply {
		return api.do(http.MethodPost, authPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`)
	}
	r := refresh(first)
	if r.status != 200 {
		t.Fatalf("first refresh: %d %s", r.status, r.body)
	}
	second := cookieIn(r.cookies, "catsrv_refresh")
	secondAccess, _ := r.json(t)["access_token"].(string)
	if second == "" || second == first {
		t.Fatalf("no new refresh token: %v", r.cookies)
	}
	if r := refresh(first); r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "reuse detected") {
		t.Fatalf("reused refresh token: %d %s, want 401 reuse detected", r.status, r.body)
	}
	if r := refresh(second); r.status != http.StatusUnauthorized {
		t.Fatalf("the family's newest token after reuse: %d %s, want 401", r.status, r.body)
	}
	if r := api.do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+secondAccess); r.status != http.StatusUnauthorized {
		t.Errorf("an access token of the revoked session: %d %s, want 401", r.status, r.body)
	}
	assertAudit(t, e, auth.AuditRefreshReuse)
}

func TestRefreshFamilyExpires(t *testing.T) {
	e := newAuthEnv(t)
	b := e.browser(t)
	b.login(auth.ProviderC)
	tok := b.cookie("catsrv_refresh", authPrefix+"/refresh")
	e.clock.Advance(24*time.Hour + time.Second) // the family's absolute lifetime in newAuthEnv
	r := anon(t, e).do(http.MethodPost, authPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`)
	if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "session expired") {
		t.Fatalf("refresh after the family expired: %d %s", r.status, r.body)
	}
}

func cookieIn(cookies []*http.Cookie, name string) string {
	for _, c := range cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
