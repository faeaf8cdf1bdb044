// Package oauth adapts OAuth 2 login providers to
// ports.IdentityProvider, driving github.com/markbates/goth providers
// directly (BeginAuth, Authorize, FetchUser) without gothic or gorilla
// sessions: the login state lives in catsrv's own signed cookie.
//
//   - provider_a: ProviderA, a goth.Provider of our own for an enterprise
//     single sign-on that has no goth provider (authorization code flow with
//     PKCE; the API key is the client secret; the token response carries
//     the user profile).
//   - provider_b: goth's google provider.
//   - provider_c: goth's azureadv2 provider with a tenant.
//
// Every provider can be pointed at another base URL (a self-hosted or test
// identity provider): goth's fixed endpoint hosts are rewritten to it, both
// in the authorization URL and in the server-to-server calls. The identity
// is always read from the provider's user endpoint (or, for provider_a,
// from the token response obtained with the client secret over a direct
// call), never from an unverified ID token.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/markbates/goth"
	"golang.org/x/oauth2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// callTimeout bounds each call to a provider: goth's calls carry no
// request context, so the client's timeout is the only bound.
const callTimeout = 15 * time.Second

// Config is what every provider needs. Credentials come from the
// environment; the composition root fills this.
type Config struct {
	ClientID     string
	ClientSecret string
	RedirectURL  string
	// BaseURL, when set, replaces the scheme and host (and prefixes the
	// path) of every endpoint of the provider.
	BaseURL string
	// Scopes replaces the provider's default scopes when set.
	Scopes []string
}

func (c Config) check(name string) error {
	switch {
	case c.ClientID == "":
		return errs.New(errs.KindInvalid, "%s: client id missing", name)
	case c.ClientSecret == "":
		return errs.New(errs.KindInvalid, "%s: client secret missing", name)
	case c.RedirectURL == "":
		return errs.New(errs.KindInvalid, "%s: redirect URI missing", name)
	}
	if _, err := url.ParseRequestURI(c.RedirectURL); err != nil {
		return errs.New(errs.KindInvalid, "%s: redirect URI %q is not a URL", name, c.RedirectURL)
	}
	return nil
}

// pkceProvider is a goth provider that takes a PKCE verifier at the start.
type pkceProvider interface {
	BeginAuthPKCE(state, verifier string) (goth.Session, error)
}

// adapter drives one goth provider as a ports.IdentityProvider.
type adapter struct {
	name     string
	provider goth.Provider
	rewrite  *rewriter
}

var _ ports.IdentityProvider = (*adapter)(nil)

// AuthURL begins a goth login and returns its (rewritten) URL.
func (a *adapter) AuthURL(_ context.Context, state, verifier, _ string) (string, error) {
	var sess goth.Session
	var err error
	if p, ok := a.provider.(pkceProvider); ok {
		sess, err = p.BeginAuthPKCE(state, verifier)
	} else {
		sess, err = a.provider.BeginAuth(state)
	}
	if err != nil {
		return "", errs.Wrap(errs.KindInternal, err, "cannot start the login")
	}
	raw, err := sess.GetAuthURL()
	if err != nil {
		return "", errs.Wrap(errs.KindInternal, err, "cannot start the login")
	}
	return a.rewrite.url(raw)
}

// Exchange authorizes a fresh goth session with the code and fetches the
// user.
func (a *adapter) Exchange(_ context.Context, code, verifier, _ string) (auth.Identity, error) {
	if code == "" {
		return auth.Identity{}, errs.New(errs.KindInvalid, "the callback carries no authorization code")
	}
	sess, err := a.provider.UnmarshalSession("{}")
	if err != nil {
		return auth.Identity{}, errs.Wrap(errs.KindInternal, err, "cannot create a provider session")
	}
	params := url.Values{"code": {code}, "code_verifier": {verifier}}
	if _, err := sess.Authorize(a.provider, params); err != nil {
		return auth.Identity{}, providerError(a.name, err, "the identity provider refused the authorization code")
	}
	u, err := a.provider.FetchUser(sess)
	if err != nil {
		return auth.Identity{}, providerError(a.name, err, "the identity provider did not return the user")
	}
	if u.UserID == "" {
		return auth.Identity{}, errs.New(errs.KindUnauthorized, "%s returned a user without an id", a.name)
	}
	name := u.Name
	if name == "" {
		name = u.NickName
	}
	return auth.Identity{Provider: a.name, Subject: u.UserID, Email: u.Email, Name: name}, nil
}

// providerError tells an unreachable provider (unavailable) from one that
// answered no (unauthorized).
func providerError(name string, err error, refused string) error {
	var netErr net.Error
	var urlErr *url.Error
	var retrieve *oauth2.RetrieveError
	if errors.As(err, &urlErr) {
		// goth puts the provider's access token in the userinfo URL's query:
		// the cause that reaches the logs names the endpoint only.
		endpoint := urlErr.URL
		if u, perr := url.Parse(urlErr.URL); perr == nil {
			endpoint = u.Scheme + "://" + u.Host + u.Path
		}
		err = fmt.Errorf("%s %s: %w", urlErr.Op, endpoint, urlErr.Err)
	}
	switch {
	case errors.As(err, &retrieve):
		return errs.Wrap(errs.KindUnauthorized, err, refused)
	case errors.As(err, &netErr), urlErr != nil:
		return errs.Wrap(errs.KindUnavailable, err, name+": the identity provider is unreachable")
	}
	return errs.Wrap(errs.KindUnauthorized, err, refused)
}

// client returns the HTTP client of a provider's server-to-server calls.
func client(rw *rewriter) *http.Client {
	return &http.Client{Timeout: callTimeout, Transport: rw}
}
