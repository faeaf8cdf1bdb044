package authapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/auth"
)

// TestLoginFlows runs each provider's whole flow through the HTTP app
// against its local identity provider: start, authorization URL,
// simulated login, callback, cookies, /memory, refresh, logout, and the
// old tokens refused.
func TestLoginFlows(t *testing.T) {
	for _, p := range auth.Providers {
		t.Run(p, func(t *testing.T) {
			e := NewAuthEnv(t)
			b := e.Browser(t)
			idp := e.IDPs[p]

			authURL := b.StartLogin(p, "")
			u, err := url.Parse(authURL)
			if err != nil || !strings.HasPrefix(authURL, idp.Srv.URL+"/") {
				t.Fatalf("authorization URL %q does not point at the identity provider %s", authURL, idp.Srv.URL)
			}
			q := u.Query()
			wantRedirect := e.Srv.URL + AuthPrefix + "/" + p + "/callback"
			if q.Get("client_id") != idp.ClientID || q.Get("redirect_uri") != wantRedirect || q.Get("response_type") != "code" || len(q.Get("state")) < 40 {
				t.Fatalf("authorization URL query %v", q)
			}
			if p == auth.ProviderA && (q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256") {
				t.Fatalf("provider_a must use PKCE: %v", q)
			}
			if b.Cookie(StateCookieFor+p, AuthPrefix+"/"+p+"/callback") == "" {
				t.Fatal("no login state cookie after start")
			}

			cb := b.Do(http.MethodGet, b.LoginAtIDP(authURL), "")
			if cb.Status != http.StatusSeeOther || cb.Header.Get("Location") != PostLoginURL {
				t.Fatalf("callback: status %d, Location %q, body %s", cb.Status, cb.Header.Get("Location"), cb.Body)
			}
			access, refresh := b.Cookie("catsrv_access", "/"), b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
			if access == "" || refresh == "" {
				t.Fatalf("session cookies missing after callback: %v", cb.Cookies)
			}
			if b.Cookie(StateCookieFor+p, AuthPrefix+"/"+p+"/callback") != "" {
				t.Error("login state cookie kept after the callback")
			}
			claims, err := e.Tokens.Verify(access)
			if err != nil || claims.Role != auth.RoleUser || !claims.ExpiresAt.Equal(Now.Add(2*time.Hour)) {
				t.Fatalf("access token: %+v, %v; want role user, 2 hours (the CAT's expiration_hours)", claims, err)
			}
			user, err := e.Store.User(t.Context(), claims.Subject)
			if err != nil || user.Provider != p || user.Subject != idp.User.ID || user.Email != idp.User.Email || user.Name != idp.User.Name {
				t.Fatalf("stored user %+v, %v; want %s's %+v", user, err, p, idp.User)
			}

			// The cookie authenticates /memory; writes need the origin check.
			if r := b.Do(http.MethodGet, AuthPrefix+"/memory", ""); r.Status != 200 || string(r.Body) != "{\"preferences\":{},\"updated_at\":null}\n" {
				t.Fatalf("GET /memory: %d %s", r.Status, r.Body)
			}
			if r := b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":{"lang":"fr"}}`, b.SameOrigin()...); r.Status != 200 {
				t.Fatalf("POST /memory: %d %s", r.Status, r.Body)
			}
			Bearer := anon(t, e)
			if r := Bearer.Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+access); r.Status != 200 || !strings.Contains(string(r.Body), `"lang":"fr"`) {
				t.Fatalf("GET /memory with the bearer token: %d %s", r.Status, r.Body)
			}

			e.Clock.Advance(time.Minute)
			r := b.Do(http.MethodPost, AuthPrefix+"/refresh", "", b.SameOrigin()...)
			if r.Status != 200 {
				t.Fatalf("refresh: %d %s", r.Status, r.Body)
			}
			access2, refresh2 := b.Cookie("catsrv_access", "/"), b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
			if access2 == access || refresh2 == refresh || r.JSON(t)["access_token"] != access2 {
				t.Fatalf("refresh did not rotate both tokens: %s", r.Body)
			}

			if r := b.Do(http.MethodPost, AuthPrefix+"/logout", "", b.SameOrigin()...); r.Status != 200 {
				t.Fatalf("logout: %d %s", r.Status, r.Body)
			}
			if b.Cookie("catsrv_access", "/") != "" || b.Cookie("catsrv_refresh", AuthPrefix+"/refresh") != "" {
				t.Error("logout left session cookies")
			}
			for name, tok := range map[string]string{"access before refresh": access, "access after refresh": access2} {
				if r := Bearer.Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+tok); r.Status != http.StatusUnauthorized {
					t.Errorf("%s after logout: %d %s, want 401", name, r.Status, r.Body)
				}
			}
			for name, tok := range map[string]string{"rotated": refresh, "current": refresh2} {
				if r := Bearer.Do(http.MethodPost, AuthPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`); r.Status != http.StatusUnauthorized {
					t.Errorf("%s refresh token after logout: %d %s, want 401", name, r.Status, r.Body)
				}
			}
			if r := b.Do(http.MethodPost, AuthPrefix+"/logout", "", b.SameOrigin()...); r.Status != 200 {
				t.Errorf("second logout: %d %s, want 200", r.Status, r.Body)
			}
			assertAudit(t, e, auth.AuditLoginStart, auth.AuditLoginSuccess, auth.AuditRefresh, auth.AuditLogout)
		})
	}
}

// anon is a client that keeps no cookies, for bearer-token and body calls.
func anon(t *testing.T, e *AuthEnv) *Browser {
	b := e.Browser(t)
	b.Client.Jar = nil
	return b
}

// assertAudit checks that the audit log holds each kind at least once,
// with the request's IP.
func assertAudit(t *testing.T, e *AuthEnv, kinds ...auth.AuditKind) {
	t.Helper()
	Events, err := e.Store.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		i := slices.IndexFunc(Events, func(ev auth.AuditEvent) bool { return ev.Kind == k })
		if i < 0 {
			t.Errorf("audit log has no %s event: %+v", k, Events)
			continue
		}
		if Events[i].IP != "127.0.0.1" || Events[i].Time.IsZero() {
			t.Errorf("%s event %+v: want IP 127.0.0.1 and a time", k, Events[i])
		}
	}
}

func TestCallbackJSON(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	r := b.Login(auth.ProviderB, "Accept", "application/json")
	if r.Status != 200 {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
	body := r.JSON(t)
	user, _ := body["user"].(map[string]any)
	if body["access_token"] != b.Cookie("catsrv_access", "/") || body["token_type"] != "Bearer" || body["expires_in"] != float64(7200) ||
		user["email"] != "bob@b.example" || user["provider"] != auth.ProviderB {
		t.Fatalf("body %s", r.Body)
	}
	if _, leaked := body["refresh_token"]; leaked {
		t.Error("the refresh token must stay in its cookie")
	}
}

func TestRefreshReuseRevokesFamily(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	b.Login(auth.ProviderA)
	first := b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
	api := anon(t, e)
	refresh := func(tok string) Reply {
		return api.Do(http.MethodPost, AuthPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`)
	}
	r := refresh(first)
	if r.Status != 200 {
		t.Fatalf("first refresh: %d %s", r.Status, r.Body)
	}
	second := cookieIn(r.Cookies, "catsrv_refresh")
	secondAccess, _ := r.JSON(t)["access_token"].(string)
	if second == "" || second == first {
		t.Fatalf("no new refresh token: %v", r.Cookies)
	}
	if r := refresh(first); r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "reuse detected") {
		t.Fatalf("reused refresh token: %d %s, want 401 reuse detected", r.Status, r.Body)
	}
	if r := refresh(second); r.Status != http.StatusUnauthorized {
		t.Fatalf("the family's newest token after reuse: %d %s, want 401", r.Status, r.Body)
	}
	if r := api.Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+secondAccess); r.Status != http.StatusUnauthorized {
		t.Errorf("an access token of the revoked session: %d %s, want 401", r.Status, r.Body)
	}
	assertAudit(t, e, auth.AuditRefreshReuse)
}

func TestRefreshFamilyExpires(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	b.Login(auth.ProviderC)
	tok := b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
	e.Clock.Advance(24*time.Hour + time.Second) // the family's absolute lifetime in newAuthEnv
	r := anon(t, e).Do(http.MethodPost, AuthPrefix+"/refresh", `{"refresh_token":"`+tok+`"}`)
	if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "session expired") {
		t.Fatalf("refresh after the family expired: %d %s", r.Status, r.Body)
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
