package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/demo"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/web"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

const secret = "e2e-secret-of-at-least-32-bytes-for-hs256"

// browserPath finds Chromium, or skips the test (fails it under CI=true).
// Under -short the browser tests skip: they take minutes.
func browserPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the browser tests")
	}
	if p := os.Getenv("CATSRV_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (set CATSRV_CHROMIUM or apt-get install chromium); CI=true requires the browser tests")
	}
	t.Skip("no Chromium found (set CATSRV_CHROMIUM or apt-get install chromium): skipping the browser tests")
	return ""
}

// artifacts returns the directory for screenshots and downloads.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CATSRV_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "e2e")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("artifacts in %s", abs)
	return abs
}

// site is the HTTP app on demo data with an admin token.
type site struct {
	url   string
	admin string
}

// newSite seeds a SQLite database with demo data of CATs demo (busiest)
// and acme over the 90 days up to today, and serves the app on it.
func newSite(t *testing.T) *site {
	t.Helper()
	return newAuthSite(t, nil)
}

// authSetup builds the app's /api/v1/auth dependencies once its URL is
// known, over its CATs and token service.
type authSetup func(url string, cats ports.CatDirectory, toks *tokens.Service) *authapi.Deps

// newAuthSite is newSite with the auth routes setup builds (nil: none);
// CAT demo enables the generic provider corp.
func newAuthSite(t *testing.T, setup authSetup) *site {
	t.Helper()
	return newSiteWithCats(t, setup, nil)
}

// newSiteWithCats is newAuthSite with CATs acme and demo changed by edit
// (nil: as they are) before the app is built.
func newSiteWithCats(t *testing.T, setup authSetup, edit func(acme, demo *catconfig.Cat)) *site {
	t.Helper()
	return newSiteWith(t, siteOptions{setup: setup, edit: edit})
}

// siteOptions shape a test site; the zero value is newSite's.
type siteOptions struct {
	setup authSetup                       // the auth routes (nil: none)
	edit  func(acme, demo *catconfig.Cat) // changes to the CATs (nil: none)
	// decorate changes each demo interaction (nil: as generated), given
	// its position in the stream.
	decorate func(k int, i *analytics.Interaction)
	wrap     func(http.Handler) http.Handler // wraps the app's handler (nil: as it is)
	// interactions and days are the demo data's size and span (0: 6000
	// over 90 days).
	interactions, days int
}

// newSiteWith seeds and serves a site as o says.
func newSiteWith(t *testing.T, o siteOptions) *site {
	t.Helper()
	setup, edit, decorate := o.setup, o.edit, o.decorate
	if o.interactions == 0 {
		o.interactions = 6000
	}
	if o.days == 0 {
		o.days = 90
	}
	t.Cleanup(httpapi.UseSpecErrors())
	ctx := t.Context()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })

	end := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(demo.Generate(pw, demo.Options{Interactions: o.interactions, Cats: []string{"demo", "acme"}, Days: o.days, Seed: 7, End: end}))
	}()
	if _, err := store.Append(ctx, decorated(decoded(pr), decorate)); err != nil {
		t.Fatal(err)
	}

	// acme's analytics are public, its chat log is not.
	acme := catconfig.Defaults("acme")
	acme.Security.Analytics.Public = true
	demoCat := catconfig.Defaults("demo")
	demoCat.Security.Providers.Generic = map[string]catconfig.Provider{"corp": {Enabled: true}}
	if edit != nil {
		edit(&acme, &demoCat)
	}
	cats := memstore.NewCats(acme, demoCat)
	toks, err := tokens.New([]byte(secret), "catsrv", "catsrv", clock.System{})
	if err != nil {
		t.Fatal(err)
	}
	admin, _, err := toks.Issue("e2e-admin", "admin", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	var authDeps *authapi.Deps
	if setup != nil {
		authDeps = setup(srv.URL, cats, toks)
	}
	_, h = httpapi.New(httpapi.Deps{
		Reporter:  reporter.New(cats, store, store.Rollups(), clock.System{}),
		Tokens:    toks,
		Logger:    slog.New(slog.DiscardHandler),
		Browser:   store,
		Usage:     store,
		Dashboard: web.Assets(),
		Auth:      authDeps,
	})
	if o.wrap != nil {
		h = o.wrap(h)
	}
	return &site{url: srv.URL, admin: admin}
}

// decorated yields seq's interactions, each changed by decorate (if any).
func decorated(seq iter.Seq2[analytics.Interaction, error], decorate func(int, *analytics.Interaction)) iter.Seq2[analytics.Interaction, error] {
	if decorate == nil {
		return seq
	}
	return func(yield func(analytics.Interaction, error) bool) {
		k := 0
		for i, err := range seq {
			if err == nil {
				decorate(k, &i)
				k++
			}
			if !yield(i, err) {
				return
			}
		}
	}
}

// decoded yields the interactions of JSON Lines input.
func decoded(r io.Reader) iter.Seq2[analytics.Interaction, error] {
	return func(yield func(analytics.Interaction, error) bool) {
		for line := range jsonl.Decode(r) {
			if !yield(line.Interaction, line.Err) {
				return
			}
		}
	}
}

// api gets an analytics route with the admin token and decodes its JSON.
func (s *site) api(t *testing.T, path, query string, out any) {
	t.Helper()
	body := s.raw(t, path, query)
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, body)
	}
}

// raw gets an analytics route with the admin token.
func (s *site) raw(t *testing.T, path, query string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.url+analyticsapi.Prefix+path+"?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s?%s: %d %s", path, query, res.StatusCode, strings.TrimSpace(string(body)))
	}
	return body
}
