package base

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// dashboardCSP allows the page its own scripts, styles, API calls and
// form posts (provider sign-in) and nothing else: no inline script, no
// other origin, no framing.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// RegisterDashboard serves the admin page: index.html at / and the other
// assets under /ui/, and the favicon at /favicon.ico as well. Only those
// paths are taken, so /api, /docs, /openapi*, /healthz and /readyz keep
// their own handlers.
//
// Caching: the build names the script and stylesheet by their content
// (app.<hash>.js), so those are cached for good (immutable); index.html and
// anything else must be revalidated (no-cache) against its ETag, a hash
// of its content, and a match is a 304. When the browser accepts gzip and
// the build left a NAME.gz next to a file, that is sent instead, with
// Content-Encoding: gzip.
func RegisterDashboard(mux *http.ServeMux, assets fs.FS) {
	if assets == nil {
		return
	}
	s := &staticFiles{fs: assets, etags: map[string]string{}}
	mux.Handle("GET /{$}", dashboardHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, "index.html")
	})))
	mux.Handle("GET /favicon.ico", dashboardHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, "favicon.svg")
	})))
	mux.Handle("GET /ui/", dashboardHeaders(http.StripPrefix("/ui", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" || strings.HasSuffix(name, "/") || name == "index.html" || strings.HasSuffix(name, ".gz") || !fs.ValidPath(name) {
			// No directory listings, one address for the page, and the
			// compressed copies only through Accept-Encoding.
			http.NotFound(w, r)
			return
		}
		s.serve(w, r, name)
	}))))
}

// fingerprinted matches the names the build gives content-hashed assets.
var fingerprinted = regexp.MustCompile(`\.[0-9a-f]{10}\.(js|css)$`)

// staticFiles serves the embedded assets with validators.
type staticFiles struct {
	fs    fs.FS
	mu    sync.Mutex
	etags map[string]string
}

// serve writes the named asset: its caching headers, its ETag, and the
// gzip copy when the client accepts gzip and the build made one.
func (s *staticFiles) serve(w http.ResponseWriter, r *http.Request, name string) {
	data, err := fs.ReadFile(s.fs, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	if fingerprinted.MatchString(name) {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	if ctype := mime.TypeByExtension(path.Ext(name)); ctype != "" {
		h.Set("Content-Type", ctype)
	}
	sent := name
	if zipped, err := fs.ReadFile(s.fs, name+".gz"); err == nil {
		h.Add("Vary", "Accept-Encoding")
		if AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			data, sent = zipped, name+".gz"
		}
	}
	// Each representation has its own validator.
	h.Set("ETag", s.etag(sent, data))
	// ServeContent answers If-None-Match with 304 and ranges; the modtime
	// is zero, so it sends no Last-Modified.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// etag returns the strong validator of an asset, a hash of its content,
// computed once.
func (s *staticFiles) etag(name string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.etags[name]; ok {
		return e
	}
	sum := sha256.Sum256(data)
	e := `"` + hex.EncodeToString(sum[:8]) + `"`
	s.etags[name] = e
	return e
}

// dashboardHeaders adds the page's security headers and, unless the asset
// sets its own (fingerprinted assets do), Cache-Control: no-cache, so
// browsers revalidate with the ETag.
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
