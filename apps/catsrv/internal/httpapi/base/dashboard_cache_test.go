package base_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

// fetch requests path from the app with the given request headers
// ("Name: value").
func fetch(t *testing.T, e *Env, path string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	return rec
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDashboardCaching: the fingerprinted assets are cached for good, the
// page and the favicon revalidated with an ETag that a 304 answers; the
// precompressed copies are sent to browsers that accept gzip and decode
// to the same bytes, with a validator of their own.
func TestDashboardCaching(t *testing.T) {
	e := NewEnv(t, withDashboard())
	script, style := builtAssets(t)
	for _, c := range []struct {
		path, cache string
		gz          bool
	}{
		{"/", "no-cache", true},
		{script, "public, max-age=31536000, immutable", true},
		{style, "public, max-age=31536000, immutable", true},
		{"/favicon.ico", "no-cache", false},
	} {
		t.Run(c.path, func(t *testing.T) {
			plain := fetch(t, e, c.path)
			if plain.Code != 200 || plain.Header().Get("Cache-Control") != c.cache || plain.Header().Get("Content-Encoding") != "" {
				t.Fatalf("status %d, Cache-Control %q, Content-Encoding %q", plain.Code, plain.Header().Get("Cache-Control"), plain.Header().Get("Content-Encoding"))
			}
			etag := plain.Header().Get("ETag")
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("ETag %q", etag)
			}
			again := fetch(t, e, c.path, "If-None-Match: "+etag)
			if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
				t.Errorf("If-None-Match: status %d, %d bytes, want 304 and none", again.Code, again.Body.Len())
			}
			if other := fetch(t, e, c.path, `If-None-Match: "other"`); other.Code != 200 {
				t.Errorf("stale If-None-Match: status %d", other.Code)
			}
			zipped := fetch(t, e, c.path, "Accept-Encoding: gzip, br")
			if !c.gz {
				if zipped.Header().Get("Content-Encoding") != "" || !bytes.Equal(zipped.Body.Bytes(), plain.Body.Bytes()) {
					t.Errorf("uncompressed asset changed with Accept-Encoding")
				}
				return
			}
			if zipped.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(zipped.Header().Get("Vary"), "Accept-Encoding") {
				t.Fatalf("Content-Encoding %q, Vary %q", zipped.Header().Get("Content-Encoding"), zipped.Header().Get("Vary"))
			}
			if zipped.Body.Len() >= plain.Body.Len() || !bytes.Equal(gunzip(t, zipped.Body.Bytes()), plain.Body.Bytes()) {
				t.Errorf("gzip copy: %d bytes for %d, or not the same content", zipped.Body.Len(), plain.Body.Len())
			}
			zetag := zipped.Header().Get("ETag")
			if zetag == etag || zetag == "" {
				t.Errorf("gzip copy ETag %q, plain %q", zetag, etag)
			}
			if z304 := fetch(t, e, c.path, "Accept-Encoding: gzip", "If-None-Match: "+zetag); z304.Code != http.StatusNotModified {
				t.Errorf("gzip If-None-Match: status %d", z304.Code)
			}
		})
	}
	if r := fetch(t, e, script+".gz"); r.Code != http.StatusNotFound {
		t.Errorf("%s.gz: status %d, want 404", script, r.Code)
	}
	page := fetch(t, e, "/").Body.String()
	if !strings.Contains(page, `rel="icon" href="/ui/favicon.svg"`) {
		t.Errorf("the page links no favicon")
	}
}
