package config

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
)

// reservedNames are taken by the three providers (and their variables,
// CATSRV_PROVIDER_A_… for "a") and by the other /api/v1/auth routes.
var reservedNames = []string{auth.ProviderA, auth.ProviderB, auth.ProviderC, "a", "b", "c",
	"providers", "refresh", "logout", "memory", "session", "me", "callback"}

// oidc reads CATSRV_OIDC_PROVIDERS and each named provider's
// CATSRV_PROVIDER_<NAME>_* variables. A listed provider must have its
// issuer, client id and client secret.
func (d *decoder) oidc(c *Config) {
	templates := map[string]setting{} // by field name
	for _, s := range settings() {
		if s.template {
			templates[reflect.TypeFor[OIDCProvider]().Field(s.index[0]).Name] = s
		}
	}
	for _, name := range d.list(&c.OIDCProviders) {
		switch {
		// The name is the route segment, the key of security.providers.<name>
		// and, upper-cased, the <NAME> of its variables.
		case !catconfig.ValidProviderName(name):
			d.fail(fmt.Errorf("CATSRV_OIDC_PROVIDERS: %q is not a provider name: want a lower-case letter, then up to 31 lower-case letters, digits or _", name))
			return
		case slices.Contains(reservedNames, name):
			d.fail(fmt.Errorf("CATSRV_OIDC_PROVIDERS: %q is a reserved name (%s)", name, strings.Join(reservedNames, ", ")))
			return
		case slices.Contains(c.OIDCProviders, name):
			d.fail(fmt.Errorf("CATSRV_OIDC_PROVIDERS names %q twice", name))
			return
		}
		c.OIDCProviders = append(c.OIDCProviders, name)
		env := func(field string) string {
			return strings.Replace(templates[field].env, "<NAME>", strings.ToUpper(name), 1)
		}
		value := func(field string) string { return d.k.String(env(field)) }
		p := OIDCProvider{
			Name: name, Issuer: value("Issuer"), ClientID: value("ClientID"), ClientSecret: Secret{value("ClientSecret")},
			Scopes: strings.Fields(value("Scopes")), DisplayName: value("DisplayName"), RedirectURI: value("RedirectURI"),
		}
		var missing []string
		for _, field := range []string{"Issuer", "ClientID", "ClientSecret"} {
			if value(field) == "" {
				missing = append(missing, env(field))
			}
		}
		if len(missing) > 0 {
			d.fail(fmt.Errorf("CATSRV_OIDC_PROVIDERS names %s: set %s", name, strings.Join(missing, ", ")))
			return
		}
		if err := oidc.CheckIssuer(p.Issuer); err != nil {
			d.fail(fmt.Errorf("%s: %w", env("Issuer"), err))
			return
		}
		if len(p.Scopes) == 0 {
			p.Scopes = strings.Fields(templates["Scopes"].def)
		}
		if p.DisplayName == "" {
			p.DisplayName = name
		}
		if p.RedirectURI == "" {
			p.RedirectURI = c.PublicURL + "/api/v1/auth/" + name + "/callback"
		} else if u, err := url.Parse(p.RedirectURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.fail(fmt.Errorf("%s %q is not an http or https URL", env("RedirectURI"), p.RedirectURI))
			return
		}
		c.OIDC = append(c.OIDC, p)
	}
}
