package oauth

import (
	"regexp"

	"github.com/markbates/goth/providers/azureadv2"
	"github.com/markbates/goth/providers/google"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// The hosts of goth's fixed endpoints.
var (
	googleHosts = []string{"accounts.google.com", "oauth2.googleapis.com", "www.googleapis.com", "openidconnect.googleapis.com"}
	azureHosts  = []string{"login.microsoftonline.com", "graph.microsoft.com"}
)

// tenantPattern accepts a directory id (GUID), a domain, or one of
// common, organizations, consumers: nothing that could change the path.
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]{0,127}$`)

// NewProviderB returns provider_b: goth's google provider. With a BaseURL
// its endpoints are <base>/o/oauth2/auth, <base>/token and
// <base>/oauth2/v2/userinfo.
func NewProviderB(c Config) (ports.IdentityProvider, error) {
	if err := c.check(auth.ProviderB); err != nil {
		return nil, err
	}
	rw, err := newRewriter(c.BaseURL, googleHosts...)
	if err != nil {
		return nil, err
	}
	scopes := c.Scopes
	if len(scopes) == 0 {
		scopes = []string{"openid", "email", "profile"}
	}
	p := google.New(c.ClientID, c.ClientSecret, c.RedirectURL, scopes...)
	p.SetName(auth.ProviderB)
	p.HTTPClient = client(rw)
	return &adapter{name: auth.ProviderB, provider: p, rewrite: rw}, nil
}

// NewProviderC returns provider_c: goth's azureadv2 provider for the
// tenant. With a BaseURL its endpoints are
// <base>/<tenant>/oauth2/v2.0/authorize, <base>/<tenant>/oauth2/v2.0/token
// and <base>/v1.0/me.
func NewProviderC(c Config, tenant string) (ports.IdentityProvider, error) {
	if err := c.check(auth.ProviderC); err != nil {
		return nil, err
	}
	if !tenantPattern.MatchString(tenant) {
		return nil, errs.New(errs.KindInvalid, "%s: tenant id %q is missing or not a directory id or domain", auth.ProviderC, tenant)
	}
	rw, err := newRewriter(c.BaseURL, azureHosts...)
	if err != nil {
		return nil, err
	}
	opts := azureadv2.ProviderOptions{Tenant: azureadv2.TenantType(tenant)}
	for _, s := range c.Scopes {
		opts.Scopes = append(opts.Scopes, azureadv2.ScopeType(s))
	}
	p := azureadv2.New(c.ClientID, c.ClientSecret, c.RedirectURL, opts)
	p.SetName(auth.ProviderC)
	p.HTTPClient = client(rw)
	return &adapter{name: auth.ProviderC, provider: p, rewrite: rw}, nil
}
