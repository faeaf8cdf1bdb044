package authapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/auth"
)

func TestCORS(t *testing.T) {
	e := NewAuthEnv(t)
	c := anon(t, e)
	preflight := func(origin string) Reply {
		return c.Do(http.MethodOptions, AuthPrefix+"/memory", "", "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	}
	t.Run("preflight from an allowed origin", func(t *testing.T) {
		r := preflight(AllowedOrigin)
		h := r.Header
		if r.Status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != AllowedOrigin ||
			h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Fatalf("status %d, headers %v", r.Status, h)
		}
	})
	t.Run("preflight allows every method of the API", func(t *testing.T) {
		// The methods the served document uses (PUT …/rename among them):
		// a browser on an allowed origin may send each.
		doc := c.Do(http.MethodGet, "/openapi.json", "")
		var spec struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(doc.Body, &spec); err != nil || len(spec.Paths) == 0 {
			t.Fatalf("document: %v", err)
		}
		methods := map[string]bool{}
		for _, ops := range spec.Paths {
			for m := range ops {
				if m != "parameters" && m != "summary" && m != "description" {
					methods[strings.ToUpper(m)] = true
				}
			}
		}
		if !methods[http.MethodPut] {
			t.Fatalf("no PUT in the document's methods %v", methods)
		}
		for m := range methods {
			r := c.Do(http.MethodOptions, AuthPrefix+"/memory", "", "Origin", AllowedOrigin, "Access-Control-Request-Method", m)
			allowed := strings.Split(r.Header.Get("Access-Control-Allow-Methods"), ", ")
			if r.Status != http.StatusNoContent || !slices.Contains(allowed, m) {
				t.Errorf("preflight for %s: status %d, Access-Control-Allow-Methods %q", m, r.Status, r.Header.Get("Access-Control-Allow-Methods"))
			}
		}
	})
	t.Run("preflight from a refused origin", func(t *testing.T) {
		r := preflight(RefusedOrigin)
		if r.Status != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("status %d, headers %v", r.Status, r.Header)
		}
	})
	t.Run("request from an allowed origin", func(t *testing.T) {
		r := c.Do(http.MethodGet, "/healthz", "", "Origin", AllowedOrigin)
		if r.Header.Get("Access-Control-Allow-Origin") != AllowedOrigin || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Fatalf("headers %v", r.Header)
		}
	})
	t.Run("request from a refused origin", func(t *testing.T) {
		r := c.Do(http.MethodGet, "/healthz", "", "Origin", RefusedOrigin)
		if r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("headers %v", r.Header)
		}
	})
	t.Run("no wildcard even if configured", func(t *testing.T) {
		e := NewAuthEnv(t, func(d *authapi.Deps) { d.AllowedOrigins = []string{"*"} })
		r := anon(t, e).Do(http.MethodOptions, AuthPrefix+"/memory", "", "Origin", RefusedOrigin, "Access-Control-Request-Method", "POST")
		if r.Status != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("status %d, headers %v", r.Status, r.Header)
		}
	})
}

func TestCSRF(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	b.Login(auth.ProviderA)
	access := b.Cookie("catsrv_access", "/")
	body := `{"preferences":{"k":1}}`
	host := strings.TrimPrefix(e.Srv.URL, "https://")
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
		{"cookie from a foreign origin", []string{"Origin", RefusedOrigin}, http.StatusForbidden},
		{"cookie with a foreign Referer", []string{"Referer", RefusedOrigin + "/page"}, http.StatusForbidden},
		{"cookie from the allowed origin", []string{"Origin", AllowedOrigin}, http.StatusOK},
		{"cookie from the same origin", []string{"Origin", e.Srv.URL}, http.StatusOK},
		{"cookie with a same-origin Referer", []string{"Referer", e.Srv.URL + "/ui/"}, http.StatusOK},
		// An origin is scheme, host and port: the server is https here.
		{"cookie from the same host over http", []string{"Origin", "http://" + host}, http.StatusForbidden},
		{"cookie with a same-host Referer over http", []string{"Referer", "http://" + host + "/ui/"}, http.StatusForbidden},
		{"cookie from the same host on another port", []string{"Origin", "https://" + otherPort}, http.StatusForbidden},
		{"cookie from the allowed host over http", []string{"Origin", "http://app.example.com"}, http.StatusForbidden},
		{"cookie from the allowed host on another port", []string{"Origin", AllowedOrigin + ":8443"}, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := b.Do(http.MethodPost, AuthPrefix+"/memory", body, c.header...); r.Status != c.status {
				t.Fatalf("POST /memory: %d %s, want %d", r.Status, r.Body, c.status)
			}
		})
	}
	t.Run("bearer needs no Origin", func(t *testing.T) {
		if r := anon(t, e).Do(http.MethodPost, AuthPrefix+"/memory", body, "Authorization", "Bearer "+access); r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("refresh cookie from a foreign origin", func(t *testing.T) {
		if r := b.Do(http.MethodPost, AuthPrefix+"/refresh", "", "Origin", RefusedOrigin); r.Status != http.StatusForbidden {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

// TestCSRFBehindAProxy serves the app over plain http, as behind a proxy
// that terminates TLS, with the public origin configured: only that origin
// is the server's own, whatever scheme or port the connection has.
func TestCSRFBehindAProxy(t *testing.T) {
	const public = "https://cat.example.com"
	e := NewAuthEnv(t, func(d *authapi.Deps) { d.PublicOrigin = public + ":443" })
	b := e.Browser(t)
	b.Login(auth.ProviderA)
	access := b.Cookie("catsrv_access", "/")
	proxied := httptest.NewServer(e.Srv.Config.Handler)
	t.Cleanup(proxied.Close)
	cases := []struct {
		name, origin string
		status       int
	}{
		{"the public origin", public, http.StatusOK},
		{"the public origin with its default port", public + ":443", http.StatusOK},
		{"the allowed origin", AllowedOrigin, http.StatusOK},
		{"the public host over http", "http://cat.example.com", http.StatusForbidden},
		{"the public host on another port", public + ":8443", http.StatusForbidden},
		{"the connection's own origin", proxied.URL, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, proxied.URL+AuthPrefix+"/memory", strings.NewReader(`{"preferences":{"k":1}}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "cat.example.com"
			req.Header.Set("Cookie", "catsrv_access="+access)
			req.Header.Set("Origin", c.origin)
			Resp, err := proxied.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(Resp.Body)
			_ = Resp.Body.Close()
			if Resp.StatusCode != c.status {
				t.Fatalf("POST /memory from %s: %d %s, want %d", c.origin, Resp.StatusCode, raw, c.status)
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
	e := NewAuthEnv(t, func(d *authapi.Deps) { delete(d.Providers, auth.ProviderC) })
	b := e.Browser(t)
	cases := []struct {
		name, path string
		status     int
		code, msg  string
	}{
		{"disabled for the CAT", "/provider_a?catname=" + DisabledCat, http.StatusForbidden, "FORBIDDEN", "provider_a is disabled for CAT locked"},
		{"not configured on the server", "/provider_c", http.StatusServiceUnavailable, "UNAVAILABLE", "provider_c is not configured on this server"},
		{"unknown CAT", "/provider_a?catname=nope", http.StatusNotFound, "NOT_FOUND", "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.Do(http.MethodPost, AuthPrefix+c.path, "")
			body := r.JSON(t)
			if r.Status != c.status || body["error"] != c.code || body["status"] != float64(c.status) || !strings.Contains(body["message"].(string), c.msg) {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
	}
	if r := b.Login(auth.ProviderB); r.Status != http.StatusSeeOther {
		t.Fatalf("provider_b next to an unconfigured provider_c: %d %s", r.Status, r.Body)
	}
	assertAudit(t, e, auth.AuditProviderDisabled)
}

func TestAuthNotConfigured(t *testing.T) {
	t.Cleanup(httpapi.UseSpecErrors())
	_, h := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler)})
	srv := NewTestServer(t, h)
	r, err := srv.Client().Post(srv.URL+AuthPrefix+"/provider_a", "application/json", nil)
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
	e := NewAuthEnv(t)
	admin, _, err := e.Tokens.Issue("root", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := anon(t, e)
	target := "/api/v1/analytics/metrics/total_interactions?catname=" + PrivateCat
	if r := c.Do(http.MethodGet, target, "", "Cookie", "catsrv_access="+admin); r.Status != 200 {
		t.Fatalf("admin cookie: %d %s", r.Status, r.Body)
	}
	if r := c.Do(http.MethodPost, AuthPrefix+"/logout", "", "Authorization", "Bearer "+admin); r.Status != 200 {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	for name, header := range map[string][]string{
		"bearer": {"Authorization", "Bearer " + admin},
		"cookie": {"Cookie", "catsrv_access=" + admin},
	} {
		if r := c.Do(http.MethodGet, target, "", header...); r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "revoked") {
			t.Errorf("revoked admin token by %s: %d %s, want 401", name, r.Status, r.Body)
		}
	}
}
