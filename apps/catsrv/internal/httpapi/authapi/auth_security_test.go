package authapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/golang-jwt/jwt/v5"

	"github.com/catsrv/catsrv/core/auth"
)

// sign makes a token with arbitrary claims, method and key.
func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestForgedTokensRefused(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	b.Login(auth.ProviderB)
	valid := b.Cookie("catsrv_access", "/")
	claims, err := e.Tokens.Verify(valid)
	if err != nil {
		t.Fatal(err)
	}
	good := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": claims.Subject, "role": "user", "iss": "catsrv", "aud": "catsrv", "jti": "forged-1",
			"iat": Now.Unix(), "nbf": Now.Unix(), "exp": Now.Add(time.Hour).Unix()}
	}
	with := func(k string, v any) jwt.MapClaims {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	key := []byte(Secret)
	header, payload, _ := strings.Cut(valid, ".")
	payload, _, _ = strings.Cut(payload, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + payload + "."

	// The control: a token forged with the right key and claims passes, so
	// each refusal below is due to its one defect.
	if r := anon(t, e).Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, key, good())); r.Status != 200 {
		t.Fatalf("control token refused: %d %s", r.Status, r.Body)
	}
	cases := []struct{ name, token string }{
		{"alg none", none},
		{"alg none, signature kept", strings.Replace(valid, header, base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)), 1)},
		{"HS384", sign(t, jwt.SigningMethodHS384, key, good())},
		{"HS512", sign(t, jwt.SigningMethodHS512, key, good())},
		{"wrong key", sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!!"), good())},
		{"tampered payload", header + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"someone-else","role":"admin"}`)) + "." + strings.Split(valid, ".")[2]},
		{"expired", sign(t, jwt.SigningMethodHS256, key, with("exp", Now.Add(-time.Minute).Unix()))},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, key, with("nbf", Now.Add(time.Hour).Unix()))},
		{"missing exp", sign(t, jwt.SigningMethodHS256, key, with("exp", nil))},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, key, with("iss", "someone"))},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, key, with("aud", "other"))},
		{"missing jti", sign(t, jwt.SigningMethodHS256, key, with("jti", nil))},
		{"garbage", "not.a.token"},
		{"empty", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := anon(t, e).Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+c.token)
			if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != "Bearer" || r.JSON(t)["error"] != "UNAUTHORIZED" {
				t.Fatalf("status %d %s, want 401", r.Status, r.Body)
			}
		})
	}
	t.Run("revoked by logout", func(t *testing.T) {
		if r := anon(t, e).Do(http.MethodPost, AuthPrefix+"/logout", "", "Authorization", "Bearer "+valid); r.Status != 200 {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		r := anon(t, e).Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+valid)
		if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "revoked") {
			t.Fatalf("status %d %s, want 401 revoked", r.Status, r.Body)
		}
	})
}

func TestStateTampering(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(e *AuthEnv, b *Browser, callback string) Reply
		status int
		reason string
	}{
		{"no state cookie", func(e *AuthEnv, b *Browser, callback string) Reply {
			return anon(b.T, e).Do(http.MethodGet, callback, "")
		}, 400, "cookie missing"},
		{"state mismatch", func(_ *AuthEnv, b *Browser, callback string) Reply {
			return b.Do(http.MethodGet, replaceParam(callback, "state", "forged-state"), "")
		}, 400, "state mismatch"},
		{"no state parameter", func(_ *AuthEnv, b *Browser, callback string) Reply {
			return b.Do(http.MethodGet, replaceParam(callback, "state", ""), "")
		}, 400, "state mismatch"},
		{"tampered cookie", func(e *AuthEnv, b *Browser, callback string) Reply {
			sealed := b.Cookie(StateCookieFor+auth.ProviderA, AuthPrefix+"/provider_a/callback")
			return anon(b.T, e).Do(http.MethodGet, callback, "", "Cookie", StateCookieFor+auth.ProviderA+"=x"+sealed[1:])
		}, 400, "not valid"},
		{"expired", func(e *AuthEnv, b *Browser, callback string) Reply {
			e.Clock.Advance(11 * time.Minute)
			return b.Do(http.MethodGet, callback, "")
		}, 401, "login expired"},
		{"replayed", func(e *AuthEnv, b *Browser, callback string) Reply {
			sealed := b.Cookie(StateCookieFor+auth.ProviderA, AuthPrefix+"/provider_a/callback")
			if r := b.Do(http.MethodGet, callback, ""); r.Status != http.StatusSeeOther {
				return r
			}
			return anon(b.T, e).Do(http.MethodGet, callback, "", "Cookie", StateCookieFor+auth.ProviderA+"="+sealed)
		}, 401, "already completed"},
		{"provider error", func(_ *AuthEnv, b *Browser, callback string) Reply {
			return b.Do(http.MethodGet, replaceParam(callback, "error", "access_denied"), "")
		}, 401, "access_denied"},
		{"bad code", func(_ *AuthEnv, b *Browser, callback string) Reply {
			return b.Do(http.MethodGet, replaceParam(callback, "code", "forged-code"), "")
		}, 401, "refused the authorization code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewAuthEnv(t)
			b := e.Browser(t)
			callback := b.LoginAtIDP(b.StartLogin(auth.ProviderA, ""))
			r := c.tamper(e, b, callback)
			if r.Status != c.status || !strings.Contains(string(r.Body), c.reason) {
				t.Fatalf("status %d %s, want %d mentioning %q", r.Status, r.Body, c.status, c.reason)
			}
			if cookieIn(r.Cookies, "catsrv_access") != "" {
				t.Error("a failed callback set a session cookie")
			}
			assertAudit(t, e, auth.AuditLoginFailure)
		})
	}
}

// replaceParam sets one query parameter of a URL.
func replaceParam(raw, key, value string) string {
	base, query, _ := strings.Cut(raw, "?")
	var parts []string
	for p := range strings.SplitSeq(query, "&") {
		if !strings.HasPrefix(p, key+"=") {
			parts = append(parts, p)
		}
	}
	return base + "?" + strings.Join(append(parts, key+"="+value), "&")
}

func TestCookieFlags(t *testing.T) {
	cases := []struct {
		name       string
		opt        AuthOption
		secure     bool
		sameSite   http.SameSite
		sameSiteIn string
	}{
		{"default Lax, Secure", func(*authapi.Deps) {}, true, http.SameSiteLaxMode, "Lax"},
		{"Strict", func(d *authapi.Deps) { d.Cookies.SameSite = http.SameSiteStrictMode }, true, http.SameSiteStrictMode, "Strict"},
		{"insecure localhost development", func(d *authapi.Deps) { d.Cookies.Insecure = true }, false, http.SameSiteLaxMode, "Lax"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewAuthEnv(t, c.opt)
			b := e.Browser(t)
			start := b.Do(http.MethodPost, AuthPrefix+"/provider_b", "")
			callback := b.LoginAtIDP(start.JSON(t)["authorization_url"].(string))
			state := start.Cookies[0]
			if state.Name != StateCookieFor+"provider_b" || !state.HttpOnly || state.Secure != c.secure ||
				state.SameSite != http.SameSiteLaxMode || state.Path != AuthPrefix+"/provider_b/callback" || state.MaxAge != 600 {
				t.Errorf("state cookie %s", state)
			}
			var sealed string
			if c.secure {
				sealed = b.Cookie(state.Name, state.Path)
			} else {
				sealed = state.Value
			}
			r := anon(t, e).Do(http.MethodGet, callback, "", "Cookie", state.Name+"="+sealed)
			want := map[string]struct {
				path   string
				maxAge int
			}{"catsrv_access": {"/", 7200}, "catsrv_refresh": {AuthPrefix, 86400}}
			for _, ck := range r.Cookies {
				w, ok := want[ck.Name]
				if !ok {
					continue
				}
				delete(want, ck.Name)
				if !ck.HttpOnly || ck.Secure != c.secure || ck.SameSite != c.sameSite || ck.Path != w.path || ck.MaxAge != w.maxAge {
					t.Errorf("cookie %s, want HttpOnly, Secure %v, SameSite %s, Path %s, Max-Age %d", ck, c.secure, c.sameSiteIn, w.path, w.maxAge)
				}
			}
			if len(want) > 0 {
				t.Errorf("cookies not set: %v (got %v)", want, r.Cookies)
			}
		})
	}
}
