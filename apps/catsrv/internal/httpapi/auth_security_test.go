package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

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
	e := newAuthEnv(t)
	b := e.browser(t)
	b.login(auth.ProviderB)
	valid := b.cookie("catsrv_access", "/")
	claims, err := e.tokens.Verify(valid)
	if err != nil {
		t.Fatal(err)
	}
	good := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": claims.Subject, "role": "user", "iss": "catsrv", "aud": "catsrv", "jti": "forged-1",
			"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
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
	key := []byte(testSecret)
	header, payload, _ := strings.Cut(valid, ".")
	payload, _, _ = strings.Cut(payload, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + payload + "."

	// The control: a token forged with the right key and claims passes, so
	// each refusal below is due to its one defect.
	if r := anon(t, e).do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+sign(t, jwt.SigningMethodHS256, key, good())); r.status != 200 {
		t.Fatalf("control token refused: %d %s", r.status, r.body)
	}
	cases := []struct{ name, token string }{
		{"alg none", none},
		{"alg none, signature kept", strings.Replace(valid, header, base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)), 1)},
		{"HS384", sign(t, jwt.SigningMethodHS384, key, good())},
		{"HS512", sign(t, jwt.SigningMethodHS512, key, good())},
		{"wrong key", sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!!"), good())},
		{"tampered payload", header + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"someone-else","role":"admin"}`)) + "." + strings.Split(valid, ".")[2]},
		{"expired", sign(t, jwt.SigningMethodHS256, key, with("exp", now.Add(-time.Minute).Unix()))},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, key, with("nbf", now.Add(time.Hour).Unix()))},
		{"missing exp", sign(t, jwt.SigningMethodHS256, key, with("exp", nil))},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, key, with("iss", "someone"))},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, key, with("aud", "other"))},
		{"missing jti", sign(t, jwt.SigningMethodHS256, key, with("jti", nil))},
		{"garbage", "not.a.token"},
		{"empty", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := anon(t, e).do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+c.token)
			if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != "Bearer" || r.json(t)["error"] != "UNAUTHORIZED" {
				t.Fatalf("status %d %s, want 401", r.status, r.body)
			}
		})
	}
	t.Run("revoked by logout", func(t *testing.T) {
		if r := anon(t, e).do(http.MethodPost, authPrefix+"/logout", "", "Authorization", "Bearer "+valid); r.status != 200 {
			t.Fatalf("logout: %d %s", r.status, r.body)
		}
		r := anon(t, e).do(http.MethodGet, authPrefix+"/memory", "", "Authorization", "Bearer "+valid)
		if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "revoked") {
			t.Fatalf("status %d %s, want 401 revoked", r.status, r.body)
		}
	})
}

func TestStateTampering(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(e *authEnv, b *browser, callback string) reply
		status int
		reason string
	}{
		{"no state cookie", func(e *authEnv, b *browser, callback string) reply {
			return anon(b.t, e).do(http.MethodGet, callback, "")
		}, 400, "cookie missing"},
		{"state mismatch", func(_ *authEnv, b *browser, callback string) reply {
			return b.do(http.MethodGet, replaceParam(callback, "state", "forged-state"), "")
		}, 400, "state mismatch"},
		{"no state parameter", func(_ *authEnv, b *browser, callback string) reply {
			return b.do(http.MethodGet, replaceParam(callback, "state", ""), "")
		}, 400, "state mismatch"},
		{"tampered cookie", func(e *authEnv, b *browser, callback string) reply {
			sealed := b.cookie(stateCookieFor+auth.ProviderA, authPrefix+"/provider_a/callback")
			return anon(b.t, e).do(http.MethodGet, callback, "", "Cookie", stateCookieFor+auth.ProviderA+"=x"+sealed[1:])
		}, 400, "not valid"},
		{"expired", func(e *authEnv, b *browser, callback string) reply {
			e.clock.Advance(11 * time.Minute)
			return b.do(http.MethodGet, callback, "")
		}, 401, "login expired"},
		{"replayed", func(e *authEnv, b *browser, callback string) reply {
			sealed := b.cookie(stateCookieFor+auth.ProviderA, authPrefix+"/provider_a/callback")
			if r := b.do(http.MethodGet, callback, ""); r.status != http.StatusSeeOther {
				return r
			}
			return anon(b.t, e).do(http.MethodGet, callback, "", "Cookie", stateCookieFor+auth.ProviderA+"="+sealed)
		}, 401, "already completed"},
		{"provider error", func(_ *authEnv, b *browser, callback string) reply {
			return b.do(http.MethodGet, replaceParam(callback, "error", "access_denied"), "")
		}, 401, "access_denied"},
		{"bad code", func(_ *authEnv, b *browser, callback string) reply {
			return b.do(http.MethodGet, replaceParam(callback, "code", "forged-code"), "")
		}, 401, "refused the authorization code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newAuthEnv(t)
			b := e.browser(t)
			callback := b.loginAtIDP(b.startLogin(auth.ProviderA, ""))
			r := c.tamper(e, b, callback)
			if r.status != c.status || !strings.Contains(string(r.body), c.reason) {
				t.Fatalf("status %d %s, want %d mentioning %q", r.status, r.body, c.status, c.reason)
			}
			if cookieIn(r.cookies, "catsrv_access") != "" {
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
		opt        authOption
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
			e := newAuthEnv(t, c.opt)
			b := e.browser(t)
			start := b.do(http.MethodPost, authPrefix+"/provider_b", "")
			callback := b.loginAtIDP(start.json(t)["authorization_url"].(string))
			state := start.cookies[0]
			if state.Name != stateCookieFor+"provider_b" || !state.HttpOnly || state.Secure != c.secure ||
				state.SameSite != http.SameSiteLaxMode || state.Path != authPrefix+"/provider_b/callback" || state.MaxAge != 600 {
				t.Errorf("state cookie %s", state)
			}
			var sealed string
			if c.secure {
				sealed = b.cookie(state.Name, state.Path)
			} else {
				sealed = state.Value
			}
			r := anon(t, e).do(http.MethodGet, callback, "", "Cookie", state.Name+"="+sealed)
			want := map[string]struct {
				path   string
				maxAge int
			}{"catsrv_access": {"/", 7200}, "catsrv_refresh": {authPrefix, 86400}}
			for _, ck := range r.cookies {
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
				t.Errorf("cookies not set: %v (got %v)", want, r.cookies)
			}
		})
	}
}
