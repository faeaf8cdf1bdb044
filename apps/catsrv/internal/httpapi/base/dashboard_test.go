package base_test

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/web"
	"github.com/catsrv/catsrv/ports"
)

// withDashboard serves the built page.
func withDashboard() EnvOption {
	return func(d *httpapi.Deps, _ *ports.InteractionLog) { d.Dashboard = web.Assets() }
}

// builtAssets returns the fingerprinted script and stylesheet paths that
// the built index.html references.
func builtAssets(t *testing.T) (script, style string) {
	t.Helper()
	page, err := fs.ReadFile(web.Assets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	js := regexp.MustCompile(`src="(/ui/app\.[0-9a-f]{10}\.js)"`).FindSubmatch(page)
	css := regexp.MustCompile(`href="(/ui/style\.[0-9a-f]{10}\.css)"`).FindSubmatch(page)
	if js == nil || css == nil {
		t.Fatalf("index.html references no fingerprinted app.js or style.css")
	}
	return string(js[1]), string(css[1])
}

func TestDashboardIsServedWithStrictHeaders(t *testing.T) {
	e := NewEnv(t, withDashboard())
	script, style := builtAssets(t)
	cases := []struct {
		path, contentType, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script defer src="` + script + `"></script>`},
		{script, "text/javascript; charset=utf-8", ""},
		{style, "text/css; charset=utf-8", ""},
		{"/favicon.ico", "image/svg+xml", "<svg"},
		{"/ui/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			r := e.Get(t, c.path, "")
			if r.Status != http.StatusOK {
				t.Fatalf("status %d", r.Status)
			}
			if ct := r.Header.Get("Content-Type"); ct != c.contentType {
				t.Errorf("Content-Type %q, want %q", ct, c.contentType)
			}
			if !strings.Contains(string(r.Body), c.contains) {
				t.Errorf("body does not contain %q", c.contains)
			}
			for name, want := range map[string]string{
				"X-Content-Type-Options": "nosniff",
				"X-Frame-Options":        "DENY",
				"Referrer-Policy":        "no-referrer",
			} {
				if got := r.Header.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			csp := r.Header.Get("Content-Security-Policy")
			for _, directive := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"} {
				if !strings.Contains(csp, directive) {
					t.Errorf("CSP %q lacks %q", csp, directive)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("CSP %q allows inline or eval", csp)
			}
		})
	}
}

// The page has no inline script for the CSP to block: every script is
// loaded from /ui/.
func TestDashboardHasNoInlineScript(t *testing.T) {
	e := NewEnv(t, withDashboard())
	html := string(e.Get(t, "/", "").Body)
	for rest := html; ; {
		i := strings.Index(rest, "<script")
		if i < 0 {
			break
		}
		end := strings.Index(rest[i:], ">")
		if tag := rest[i : i+end]; !strings.Contains(tag, `src="/ui/`) {
			t.Errorf("inline script tag %q", tag)
		}
		rest = rest[i+end:]
	}
	if m := regexp.MustCompile(`\son[a-z]+\s*=`).FindString(html); m != "" {
		t.Errorf("inline event handler %q in the page", m)
	}
}

func TestDashboardLeavesOtherRoutesAlone(t *testing.T) {
	e := NewEnv(t, withDashboard())
	cases := []struct {
		path   string
		status int
		not    string
	}{
		{"/healthz", 200, "<html"},
		{"/openapi.json", 200, "<html"},
		{"/docs", 200, "catsrv analytics"},
		{AnalyticsPrefix + "/get_cats", 200, "<html"},
		{"/nope", 404, "catsrv analytics"},
		{"/ui/", 404, "app.js"},
		{"/ui/index.html", 404, ""},
		{"/ui/missing.js", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			r := e.Get(t, c.path, "")
			if r.Status != c.status {
				t.Fatalf("status %d, want %d", r.Status, c.status)
			}
			if c.not != "" && strings.Contains(string(r.Body), c.not) {
				t.Errorf("body contains %q", c.not)
			}
		})
	}
	t.Run("without assets", func(t *testing.T) {
		bare := NewEnv(t)
		if r := bare.Get(t, "/", ""); r.Status != http.StatusNotFound {
			t.Errorf("status %d without a dashboard, want 404", r.Status)
		}
	})
}
