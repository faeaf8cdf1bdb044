package base

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/web"
)

// DocsPath is the API reference page: Stoplight Elements over the
// document at /openapi.yaml, served from the binary (web.APIDocs) so that
// it renders where no CDN is reachable and calls no other host.
const DocsPath = "/docs"

// docsAssets is where the page's script and stylesheet are served.
const docsAssets = DocsPath + "/assets/"

// docsCSP allows the page its own script, its stylesheet and the inline
// styles Elements sets, requests to this server (the document, "try it")
// and nothing else.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsPage is the HTML of /docs; %s are the script's and stylesheet's names.
const docsPage = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>catsrv API reference</title>
    <link rel="stylesheet" href="` + docsAssets + `CSS">
    <script src="` + docsAssets + `JS"></script>
  </head>
  <body style="height: 100vh; margin: 0">
    <elements-api apiDescriptionUrl="/openapi.yaml" router="hash" layout="sidebar" tryItCredentialsPolicy="same-origin"></elements-api>
  </body>
</html>
`

// RegisterAPIDocs serves the reference page at /docs and its assets, the
// gzip files web.APIDocs holds (elements-<version>.js.gz and .css.gz),
// under /docs/assets/: compressed to clients that accept gzip,
// decompressed for the others; named by their version, so cached for good.
func RegisterAPIDocs(mux *http.ServeMux) {
	assets := web.APIDocs()
	var js, css string
	entries, _ := fs.ReadDir(assets, ".")
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".gz")
		switch {
		case strings.HasSuffix(name, ".js"):
			js = name
		case strings.HasSuffix(name, ".css"):
			css = name
		}
	}
	page := []byte(strings.NewReplacer(docsAssets+"JS", docsAssets+js, docsAssets+"CSS", docsAssets+css).Replace(docsPage))
	mux.HandleFunc("GET "+DocsPath, func(w http.ResponseWriter, r *http.Request) {
		docsHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "docs.html", time.Time{}, bytes.NewReader(page))
	})
	mux.HandleFunc("GET "+docsAssets+"{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if name != js && name != css {
			http.NotFound(w, r)
			return
		}
		zipped, err := fs.ReadFile(assets, name+".gz")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		docsHeaders(h)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("Vary", "Accept-Encoding")
		if strings.HasSuffix(name, ".js") {
			h.Set("Content-Type", "text/javascript; charset=utf-8")
		} else {
			h.Set("Content-Type", "text/css; charset=utf-8")
		}
		if AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(zipped))
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(zipped))
		if err != nil {
			http.Error(w, "corrupt asset", http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(w, zr) //nolint:gosec // our own embedded asset, of known size
	})
}

// docsHeaders sets the page's security headers.
func docsHeaders(h http.Header) {
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
