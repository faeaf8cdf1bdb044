package httpapi_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/auth"
)

func TestCORS(t *testing.T) {
	e := newAuthEnv(t)
	c := anon(t, e)
	preflight := func(origin string) reply {
		return c.do(http.MethodOptions, authPrefix+"/memory", "", "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	}
	t.Run("preflight from an allowed origin", func(t *testing.T) {
		r := preflight(allowedOrigin)
		h := r.header
		if r.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != allowedOrigin ||
			h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Fatalf("status %d, headers %v", r.status, h)
		}
	})
	t.Run("preflight from a refused origin", func(t *testing.T) {
		r := preflight(refusedOrigin)
		if r.status != http.StatusForbidden || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("status %d, headers %v", r.status, r.header)
		}
	})
	t.Run("request from an allowed origin", func(t *testing.T) {
		r := c.do(http.MethodGet, "/healthz", "", "Origin", allowedOrigin)
		if r.header.Get("Access-Control-Allow-Origin") != allowedOrigin || r.header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Fatalf("headers %v", r.header)
		}
	})
	t.Run("request from a refused origin", func(t *testing.T) {
		r := c.do(http.MethodGet, "/healthz", "", "Origin", refusedOrigin)
		if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("headers %v", r.header)
		}
	})
	t.Run("no wildcard even if configured", func(t *testing.T) {
		e := newAuthEnv(t, func(d *authapi.Deps) { d.AllowedOrigins = []string{"*"} })
		r := anon(t, e).do(http.MethodOptions, authPrefix+"/memory", "", "Origin", refusedOrigin, "Access-Control-Request-Method", "POST")
		if r.status != http.StatusForbidden || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("status %d, headers %v", r.status, r.header)
		}
	})
}

func TestCSRF(t *testing.T) {
	e := newAuthEnv(t)
	b := e.browser(t)
	b.login(auth.ProviderA)
	access := b.cookie("catsrv_access", "/")
	body := `{"preferences":{"k":1}}`
	host := strings.TrimPrefix(e.srv.URL, "https://")
	hostname, port, err := net.SplitHostPort(host)
	if err != nil {
		t.Fatal(err)
	}
	otherPort := net.JoinHostPort(hostname, strconv.Itoa((mustAtoi(t, port)+1)%65536))
	cases := []struct {
		name   string
		header []string
		status int
	}{
		{"cookie without Origin", nil, http.StatusForbidden},
		{"cookie from a foreign origin", []string{"Origin", refusedOrigin}, http.StatusForbidden},
		{"cookie with a foreign Referer", []string{"Referer", refusedOrigin + "/page"}, http.StatusForbidden},
		{"cookie from the allowed origin", []string{"Origin", allowedOrigin}, http.StatusOK},
		{"cookie from the same origin", []string{"Origin", e.srv.URL}, http.StatusOK},
		{"cookie with a same-origin Referer", []string{"Referer", e.srv.URL + "/ui/"}, http.StatusOK},
		// An origin is scheme, host and port: the server is https here.
		{"cookie from the same host over http", []string{"Origin", "http://" + host}, http.StatusForbidden},
		{"cookie with a same-host Referer over http", []string{"Referer", "http://" + host + "/ui/"}, http.StatusForbidden},
		{"cookie from the same host on another port", []string{"Origin", "https://" + otherPort}, http.StatusForbidden},
		{"cookie from the allowed host over http", []string{"Origin", "http://app.example.com"}, http.StatusForbidden},
		{"cookie from the allowed host on another port", []string{"Origin", allowedOrigin + ":8443"}, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := b.do(http.MethodPost, authPrefix+"/memory", body, c.header...); r.status != c.status {
				t.Fatalf("POST /memory: %d %s, want %d", r.status, r.body, c.status)
			}
		})
	}
	t.Run("bearer needs no Origin", func(t *testing.T) {
		if r := anon(t, e).do(http.MethodPost, authPrefix+"/memory", body, "Authorization", "Bearer "+access); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("refresh cookie from a foreign origin", func(t *testing.T) {
		if r := b.do(http.MethodPost, authPrefix+"/refresh", "", "Origin", refusedOrigin); r.status != http.StatusForbidden {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// TestCSRFBehindAProxy serves the app over plain http, as behind a proxy
// that terminates TLS, with the public origin configured: only that origin
// is the server's own, whatever scheme or port the connection has.
func TestCSRFBehindAProxy(t *testing.T) {
	const public = "https://cat.example.com"
	e := newAuthEnv(t, func(d *authapi.Deps) { d.PublicOrigin = public + ":443" })
	b := e.browser(t)
	b.login(auth.ProviderA)
	access := b.cookie("catsrv_access", "/")
	proxied := httptest.NewServer(e.srv.Config.Handler)
	t.Cleanup(proxied.Close)
	cases := []struct {
		name, origin string
		status       int
	}{
		{"the public origin", public, http.StatusOK},
		{"the public origin with its default port", public + ":443", http.StatusOK},
		{"the allowed origin", allowedOrigin, http.StatusOK},
		{"the public host over http", "http://cat.example.com", http.StatusForbidden},
		{"the public host on another port", public + ":8443", http.StatusForbidden},
		{"the connection's own origin", proxied.URL, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, proxied.URL+authPrefix+"/memory", strings.NewReader(`{"preferences":{"k":1}}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "cat.example.com"
			req.Header.Set("Cookie", "catsrv_access="+access)
			req.Header.Set("Origin", c.origin)
			resp, err := proxied.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("POST /memory from %s: %d %s, want %d", c.origin, resp.StatusCode, raw, c.status)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestProviderSwitches(t *testing.T) {
	e := newAuthEnv(t, func(d *authapi.Deps) { delete(d.Providers, auth.ProviderC) })
	b := e.browser(t)
	cases := []struct {
		name, path string
		status     int
		code, msg  string
	}{
		{"disabled for the CAT", "/provider_a?catname=" + disabledCat, http.StatusForbidden, "FORBIDDEN", "provider_a is disabled for CAT locked"},
		{"not configured on the server", "/provider_c", http.StatusServiceUnavailable, "UNAVAILABLE", "provider_c is not configured on this server"},
		{"unknown CAT", "/provider_a?catname=nope", http.StatusNotFound, "NOT_FOUND", "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(http.MethodPost, authPrefix+c.path, "")
			body := r.json(t)
			if r.status != c.status || body["error"] != c.code || body["status"] != float64(c.status) || !strings.Contains(body["message"].(string), c.msg) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	if r := b.login(auth.ProviderB); r.status != http.StatusSeeOther {
		t.Fatalf("provider_b next to an unconfigured provider_c: %d %s", r.status, r.body)
	}
	assertAudit(t, e, auth.AuditProviderDisabled)
}

func TestAuthNotConfigured(t *testing.T) {
	t.Cleanup(httpapi.UseSpecErrors())
	_, h := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler)})
	srv := newTestServer(t, h)
	r, err := srv.Client().Post(srv.URL+authPrefix+"/provider_a", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d", r.StatusCode)
	}
}

// TestAnalyticsHonoursSessions checks the admin check of the analytics
// routes: the access cookie works like the bearer header, and a token
// revoked by logout is refused.
func TestAnalyticsHonoursSessions(t *testing.T) {
	e := newAuthEnv(t)
	admin, _, err := e.tokens.Issue("root", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := anon(t, e)
	target := "/api/v1/analytics/metrics/total_interactions?catname=" + privateCat
	if r := c.do(http.MethodGet, target, "", "Cookie", "catsrv_access="+admin); r.status != 200 {
		t.Fatalf("admin cookie: %d %s", r.status, r.body)
	}
	if r := c.do(http.MethodPost, authPrefix+"/logout", "", "Authorization", "Bearer "+admin); r.status != 200 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	for name, header := range map[string][]string{
		"bearer": {"Authorization", "Bearer " + admin},
		"cookie": {"Cookie", "catsrv_access=" + admin},
	} {
		if r := c.do(http.MethodGet, target, "", header...); r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "revoked") {
			t.Errorf("revoked admin token by %s: %d %s, want 401", name, r.status, r.body)
		}
	}
}
