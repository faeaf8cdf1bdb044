package base

import (
	"io/fs"
	"net/http"
	"strings"
)

// dashboardCSP allows the page its own scripts, styles, API calls and
// form posts (provider sign-in) and nothing else: no inline script, no
// other origin, no framing.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// RegisterDashboard serves the admin page: index.html at / and the other
// assets under /ui/. Only those two paths are taken, so /api, /docs,
// /openapi*, /healthz and /readyz keep their own handlers.
func RegisterDashboard(mux *http.ServeMux, assets fs.FS) {
	if assets == nil {
		return
	}
	files := http.FileServerFS(assets)
	mux.Handle("GET /{$}", dashboardHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, assets, "index.html")
	})))
	mux.Handle("GET /ui/", dashboardHeaders(http.StripPrefix("/ui", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "/index.html" {
			// No directory listings, and one address for the page.
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))))
}

// dashboardHeaders adds the page's security headers. The assets are not
// content-hashed, so browsers revalidate them on each load.
func dashboardHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", dashboardCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}
