// Package oidc adapts any OpenID Connect provider (Keycloak, Okta, Auth0,
// Dex, Google, Microsoft Entra, …) to ports.IdentityProvider, with
// github.com/coreos/go-oidc/v3 for discovery and ID token verification.
//
// A Provider is configured by issuer, client id and secret, scopes and
// redirect URI. Its endpoints come from <issuer>/.well-known/openid-configuration,
// whose issuer must equal the configured one. Discovery happens on first
// use, not at construction: a provider that is down when catsrv starts
// answers unavailable (503) until it is up, and the other providers keep
// working. The login is the authorization code flow with PKCE S256 and a
// nonce; the ID token's signature is checked against the provider's JWKS
// (keys fetched again when an unknown key id appears, so a rotation is
// followed), RS256 and ES256 only, with its iss, aud, azp (when there are
// several audiences, or when present), exp, iat and nonce. The user is the
// verified sub; userinfo, when the ID token has no email or name, is called
// with a Bearer header and its sub must equal the ID token's. The token
// endpoint is authenticated with client_secret_basic or, when discovery
// offers only that, client_secret_post.
package oidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// callTimeout bounds each call to a provider (discovery, token, userinfo).
const callTimeout = 15 * time.Second

// iatLeeway is how far in the future an ID token's iat may be (clock
// skew between catsrv and the provider).
const iatLeeway = 5 * time.Minute

// maxReason bounds the reason of a refusal that reaches the audit log.
const maxReason = 200

// SigningAlgorithms are the only ID token algorithms accepted.
var SigningAlgorithms = []string{gooidc.RS256, gooidc.ES256}

// DefaultScopes are the scopes asked when none are configured.
var DefaultScopes = []string{gooidc.ScopeOpenID, "email", "profile"}

// Config is one provider's settings; the composition root fills it.
type Config struct {
	// Name is the provider's name in catsrv: the route segment and the
	// provider of its users (their accounts are (Name, sub)).
	Name         string
	Issuer       string
	ClientID     string
	ClientSecret string
	RedirectURL  string
	// Scopes default to DefaultScopes; openid is added when missing.
	Scopes []string
	// RetryAfter is the least time between two discovery attempts after a
	// failed one (a failed attempt is answered as is until then); 0 tries
	// again at every login.
	RetryAfter time.Duration
	// HTTPClient makes the calls to the provider; nil is a client with a
	// 15 s timeout.
	HTTPClient *http.Client
	// Now is the clock of the ID token checks; nil is time.Now.
	Now func() time.Time
}

// Provider is one OpenID Connect provider.
type Provider struct {
	c Config

	mu      sync.Mutex
	ready   *discovered
	lastErr error
	lastTry time.Time
}

// discovered is what discovery gave.
type discovered struct {
	provider *gooidc.Provider
	verifier *gooidc.IDTokenVerifier
	oauth    oauth2.Config
}

var _ ports.IdentityProvider = (*Provider)(nil)

// New checks c and returns the provider; it makes no call (discovery
// happens on first use).
func New(c Config) (*Provider, error) {
	switch {
	case c.Name == "":
		return nil, errs.New(errs.KindInvalid, "an OpenID Connect provider needs a name")
	case c.ClientID == "":
		return nil, errs.New(errs.KindInvalid, "%s: client id missing", c.Name)
	case c.ClientSecret == "":
		return nil, errs.New(errs.KindInvalid, "%s: client secret missing", c.Name)
	}
	if err := CheckIssuer(c.Issuer); err != nil {
		return nil, errs.Wrap(errs.KindInvalid, err, c.Name+": "+err.Error())
	}
	if u, err := url.ParseRequestURI(c.RedirectURL); err != nil || u.Host == "" {
		return nil, errs.New(errs.KindInvalid, "%s: redirect URI %q is not a URL", c.Name, c.RedirectURL)
	}
	if len(c.Scopes) == 0 {
		c.Scopes = DefaultScopes
	}
	if !slices.Contains(c.Scopes, gooidc.ScopeOpenID) {
		c.Scopes = append([]string{gooidc.ScopeOpenID}, c.Scopes...)
	}
	c.Scopes = slices.Clone(c.Scopes)
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: callTimeout}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Provider{c: c}, nil
}

// CheckIssuer accepts an https URL without query or fragment, or an http
// one on a loopback host (a provider on the same machine).
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("issuer %q is not an https URL without query or fragment", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("issuer %q must be an https URL (http only on a loopback host)", issuer)
}

// Name is the provider's name.
func (p *Provider) Name() string { return p.c.Name }

// Discover fetches the discovery document now if it has not been fetched
// yet: AuthURL and Exchange do it on their own, this lets the composition
// root warm the provider up. The error is errs.KindUnavailable.
func (p *Provider) Discover(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready != nil {
		return p.ready, nil
	}
	now := time.Now()
	if p.lastErr != nil && now.Sub(p.lastTry) < p.c.RetryAfter {
		return nil, p.lastErr
	}
	p.lastTry = now
	d, err := p.fetch(ctx)
	if err != nil {
		p.lastErr = err
		return nil, err
	}
	p.ready, p.lastErr = d, nil
	return d, nil
}

// fetch reads the discovery document and builds the verifier and the
// OAuth 2 configuration from it.
func (p *Provider) fetch(ctx context.Context) (*discovered, error) {
	// The call is bounded here; the provider keeps only the client, for
	// its later JWKS fetches (go-oidc ignores this context after).
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(context.WithoutCancel(ctx), p.c.HTTPClient), callTimeout)
	defer cancel()
	prov, err := gooidc.NewProvider(ctx, p.c.Issuer)
	if err != nil {
		var mismatch *gooidc.IssuerMismatchError
		if errors.As(err, &mismatch) {
			return nil, errs.Wrap(errs.KindUnavailable, err, fmt.Sprintf("%s: the discovery document names the issuer %q, not the configured %q",
				p.c.Name, clip(mismatch.Discovered), p.c.Issuer))
		}
		return nil, errs.Wrap(errs.KindUnavailable, err, p.c.Name+": the provider's discovery document cannot be read")
	}
	var meta struct {
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := prov.Claims(&meta); err != nil {
		return nil, errs.Wrap(errs.KindUnavailable, err, p.c.Name+": the provider's discovery document cannot be read")
	}
	endpoint := prov.Endpoint()
	switch {
	// Absent, the default is client_secret_basic (OpenID Connect Discovery 1.0 §3).
	case len(meta.AuthMethods) == 0 || slices.Contains(meta.AuthMethods, "client_secret_basic"):
		endpoint.AuthStyle = oauth2.AuthStyleInHeader
	case slices.Contains(meta.AuthMethods, "client_secret_post"):
		endpoint.AuthStyle = oauth2.AuthStyleInParams
	default:
		return nil, errs.New(errs.KindUnavailable, "%s: the provider's token endpoint takes neither client_secret_basic nor client_secret_post (it offers %s)",
			p.c.Name, clip(strings.Join(meta.AuthMethods, ", ")))
	}
	return &discovered{
		provider: prov,
		verifier: prov.Verifier(&gooidc.Config{ClientID: p.c.ClientID, SupportedSigningAlgs: SigningAlgorithms, Now: p.c.Now}),
		oauth: oauth2.Config{ClientID: p.c.ClientID, ClientSecret: p.c.ClientSecret, Endpoint: endpoint,
			RedirectURL: p.c.RedirectURL, Scopes: p.c.Scopes},
	}, nil
}

// AuthURL returns the provider's authorization URL for the login, with
// the PKCE S256 challenge of verifier and the nonce.
func (p *Provider) AuthURL(ctx context.Context, state, verifier, nonce string) (string, error) {
	if nonce == "" || verifier == "" {
		return "", errs.New(errs.KindInternal, "%s: a login needs a nonce and a PKCE verifier", p.c.Name)
	}
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return d.oauth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), gooidc.Nonce(nonce)), nil
}

// Exchange trades the code for tokens, verifies the ID token and returns
// its subject (with the email and name of the token or of userinfo).
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (auth.Identity, error) {
	if code == "" {
		return auth.Identity{}, errs.New(errs.KindInvalid, "the callback carries no authorization code")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return auth.Identity{}, err
	}
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(ctx, p.c.HTTPClient), callTimeout)
	defer cancel()
	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return auth.Identity{}, p.callError(err, "the identity provider refused the authorization code")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return auth.Identity{}, p.refused("the token response carries no ID token")
	}
	idt, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		var expired *gooidc.TokenExpiredError
		if errors.As(err, &expired) {
			return auth.Identity{}, p.refusedBy(err, "it expired at "+expired.Expiry.UTC().Format(time.RFC3339))
		}
		return auth.Identity{}, p.refusedBy(err, strings.TrimPrefix(err.Error(), "oidc: "))
	}
	var claims struct {
		AuthorizedParty   string `json:"azp"`
		Email             string `json:"email"`
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
	}
	if err := idt.Claims(&claims); err != nil {
		return auth.Identity{}, p.refusedBy(err, "its claims cannot be read")
	}
	switch {
	case idt.Subject == "":
		return auth.Identity{}, p.refused("it has no sub")
	case nonce == "" || idt.Nonce != nonce:
		return auth.Identity{}, p.refused("its nonce is not the one of this login")
	case idt.IssuedAt.IsZero():
		return auth.Identity{}, p.refused("it has no iat")
	case idt.IssuedAt.After(p.c.Now().Add(iatLeeway)):
		return auth.Identity{}, p.refused("it was issued in the future (iat)")
	case len(idt.Audience) > 1 && claims.AuthorizedParty == "":
		return auth.Identity{}, p.refused("it has several audiences and no azp")
	case claims.AuthorizedParty != "" && claims.AuthorizedParty != p.c.ClientID:
		return auth.Identity{}, p.refused(fmt.Sprintf("its azp %q is not this client", clip(claims.AuthorizedParty)))
	}
	id := auth.Identity{Provider: p.c.Name, Subject: idt.Subject, Email: claims.Email, Name: claims.Name}
	if id.Name == "" {
		id.Name = claims.PreferredUsername
	}
	if (id.Email == "" || id.Name == "") && d.provider.UserInfoEndpoint() != "" {
		info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return auth.Identity{}, p.callError(err, "the identity provider did not return the user")
		}
		if info.Subject != idt.Subject {
			return auth.Identity{}, errs.New(errs.KindUnauthorized, "%s: userinfo names another subject than the ID token", p.c.Name)
		}
		var extra struct {
			Name              string `json:"name"`
			PreferredUsername string `json:"preferred_username"`
		}
		_ = info.Claims(&extra) // optional fields
		if id.Email == "" {
			id.Email = info.Email
		}
		if id.Name == "" {
			id.Name = extra.Name
		}
		if id.Name == "" {
			id.Name = extra.PreferredUsername
		}
	}
	return id, nil
}

// refused is a refused ID token: 401, the reason audited.
func (p *Provider) refused(reason string) error {
	return errs.New(errs.KindUnauthorized, "%s: the ID token was refused: %s", p.c.Name, reason)
}

func (p *Provider) refusedBy(cause error, reason string) error {
	return errs.Wrap(errs.KindUnauthorized, cause, fmt.Sprintf("%s: the ID token was refused: %s", p.c.Name, clip(reason)))
}

// callError tells an unreachable provider (unavailable) from one that
// answered no (unauthorized).
func (p *Provider) callError(err error, refused string) error {
	var retrieve *oauth2.RetrieveError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &retrieve):
		return errs.Wrap(errs.KindUnauthorized, err, p.c.Name+": "+refused)
	case errors.As(err, &netErr), errors.As(err, &urlErr):
		return errs.Wrap(errs.KindUnavailable, err, p.c.Name+": the identity provider is unreachable")
	}
	return errs.Wrap(errs.KindUnauthorized, err, p.c.Name+": "+refused)
}

// clip bounds text that comes from the provider or a token.
func clip(s string) string {
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
