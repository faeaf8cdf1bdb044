package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/adapters/oidc/oidctest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/ports"
)

// TestProviderSignIn signs an admin in through the dashboard's provider
// button: the page lists the generic OpenID Connect provider corp with its
// display name, the click goes to a real OpenID Provider in this process
// (zitadel/oidc op), the admin types the password on its login page, and
// the browser comes back with the session cookies to the dashboard, which
// opens on the demo data (CATSRV_ADMINS names corp:<sub>: the account is
// an admin).
func TestProviderSignIn(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	const clientID, clientSecret = "catsrv-dashboard", "the-dashboard-client-secret-of-32-bytes"
	var op *oidctest.OP
	records := memstore.NewAuth()
	s := newAuthSite(t, func(url string, cats ports.CatDirectory, toks *tokens.Service) *authapi.Deps {
		callback := url + authapi.Prefix + "/corp/callback"
		op = oidctest.NewOP(t, clientID, clientSecret, callback)
		corp, err := oidc.New(oidc.Config{Name: "corp", Issuer: op.Issuer, ClientID: clientID, ClientSecret: clientSecret, RedirectURL: callback})
		if err != nil {
			t.Fatal(err)
		}
		clk := clock.System{}
		return &authapi.Deps{
			Sessions: session.New(session.Deps{Tokens: toks, Users: records, Refresh: records, Revocations: records, Audit: records,
				Cats: cats, Clock: clk, RefreshLifetime: time.Hour, Admins: []string{"corp:" + oidctest.Subject}}),
			States:     session.NewStateSealer([]byte(secret), clk),
			Memory:     prefs.New(records, prefs.DefaultLimits, clk),
			Cats:       cats,
			Providers:  map[string]ports.IdentityProvider{"corp": corp},
			OIDC:       []authapi.NamedProvider{{Name: "corp", DisplayName: "Corp SSO"}},
			DefaultCat: "demo",
			// The site is plain http on loopback.
			Cookies:      authapi.CookiePolicy{SameSite: http.SameSiteLaxMode, Insecure: true},
			PublicOrigin: url,
			PostLoginURL: "/",
		}
	})

	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	button := `//ul[@id="provider-list"]//button[normalize-space()="Sign in with Corp SSO"]`
	run(ctx, t, "open the page",
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(button)))
	shot(ctx, t, out, "signin-provider.png")

	run(ctx, t, "click the provider's button", chromedp.Click(chromedp.Search(button)))
	run(ctx, t, "log in at the provider",
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), op.Username()),
		chromedp.SendKeys(chromedp.ID("password"), oidctest.Password),
		chromedp.Submit(chromedp.ID("password")))
	// The browser goes through the provider's redirects to catsrv's
	// callback and on to the dashboard: wait until it is there.
	run(ctx, t, "come back to the dashboard", chromedp.WaitVisible(chromedp.ID("app")))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready'`)
	shot(ctx, t, out, "signin-provider-dashboard.png")
	// acme's chat log is for admins only.
	if !strings.Contains(view.Query, "catname=acme") || view.Total == "" || view.Total == "0" || len(view.Log) == 0 {
		t.Fatalf("the dashboard after the provider login shows %+v", view)
	}
	page := value(ctx, t, "read the URL", chromedp.Location())
	if !strings.HasPrefix(page, s.url+"/") {
		t.Fatalf("the browser ended at %s, not the dashboard", page)
	}

	events, err := records.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var success *auth.AuditEvent
	for i := range events {
		if events[i].Kind == auth.AuditLoginSuccess && events[i].Provider == "corp" {
			success = &events[i]
		}
	}
	if success == nil {
		t.Fatalf("no corp login in the audit log: %+v", events)
	}
	u, err := records.User(t.Context(), success.UserID)
	if err != nil || u.Provider != "corp" || u.Subject != oidctest.Subject {
		t.Fatalf("the signed-in account %+v, %v", u, err)
	}
}
