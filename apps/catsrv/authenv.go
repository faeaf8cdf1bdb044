package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/identity"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// providerVars names each provider's environment variables: the required
// ones first, then the optional ones.
var providerVars = map[string]struct{ required, optional []string }{
	auth.ProviderA: {
		required: []string{"CATSRV_PROVIDER_A_CLIENT_ID", "CATSRV_PROVIDER_A_API_KEY", "CATSRV_PROVIDER_A_BASE_URL"},
		optional: []string{"CATSRV_PROVIDER_A_REDIRECT_URI"},
	},
	auth.ProviderB: {
		required: []string{"CATSRV_PROVIDER_B_CLIENT_ID", "CATSRV_PROVIDER_B_CLIENT_SECRET"},
		optional: []string{"CATSRV_PROVIDER_B_REDIRECT_URI", "CATSRV_PROVIDER_B_BASE_URL"},
	},
	auth.ProviderC: {
		required: []string{"CATSRV_PROVIDER_C_CLIENT_ID", "CATSRV_PROVIDER_C_CLIENT_SECRET", "CATSRV_PROVIDER_C_TENANT_ID"},
		optional: []string{"CATSRV_PROVIDER_C_REDIRECT_URI", "CATSRV_PROVIDER_C_BASE_URL"},
	},
}

// authDeps builds the /api/v1/auth dependencies from the environment and
// the CAT configuration. A provider with none of its variables set is left
// unconfigured (its routes answer 503); one with only some is an error, as
// is an unsafe cookie or origin setting.
func (e environ) authDeps(ctx context.Context, addr string, cats ports.CatDirectory, toks *tokens.Service, store *sqlstore.Store, logger *slog.Logger) (*httpapi.AuthDeps, error) {
	records, err := authsql.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("auth tables: %w", err)
	}
	configured, err := cats.Cats(ctx)
	if err != nil {
		return nil, err
	}
	publicURL := strings.TrimSuffix(e.get("CATSRV_PUBLIC_URL", "http://"+addr), "/")
	if _, err := url.ParseRequestURI(publicURL); err != nil {
		return nil, fmt.Errorf("CATSRV_PUBLIC_URL %q is not a URL", publicURL)
	}
	publicOrigin, err := e.publicOrigin()
	if err != nil {
		return nil, err
	}
	cookies, err := e.cookiePolicy(publicURL)
	if err != nil {
		return nil, err
	}
	origins, err := e.allowedOrigins(configured)
	if err != nil {
		return nil, err
	}
	providers, err := e.providers(publicURL, logger)
	if err != nil {
		return nil, err
	}
	lifetime, err := time.ParseDuration(e.get("CATSRV_REFRESH_TTL", session.DefaultRefreshLifetime.String()))
	if err != nil || lifetime < time.Hour {
		return nil, fmt.Errorf("CATSRV_REFRESH_TTL must be a duration of at least 1h, e.g. 720h")
	}
	limits := prefs.DefaultLimits
	if v := e.get("CATSRV_MEMORY_MAX_BYTES", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 || n > 16<<20 {
			return nil, fmt.Errorf("CATSRV_MEMORY_MAX_BYTES must be a number of bytes between 1024 and 16777216")
		}
		limits.MaxTotalBytes = n
		limits.MaxValueBytes = min(limits.MaxValueBytes, n)
	}
	defaultCat := e.get("CATSRV_AUTH_DEFAULT_CAT", "")
	if defaultCat == "" && len(configured) > 0 {
		defaultCat = configured[0].Name
	}
	admins, err := e.admins()
	if err != nil {
		return nil, err
	}
	rateLimit, err := e.authRateLimit()
	if err != nil {
		return nil, err
	}
	secret := []byte(e.get("CATSRV_JWT_SECRET", ""))
	clk := clock.System{}
	return &httpapi.AuthDeps{
		Sessions: session.New(session.Deps{
			Tokens: toks, Users: records, Refresh: records, Revocations: records, Audit: records,
			Cats: cats, Clock: clk, RefreshLifetime: lifetime, Admins: admins,
		}),
		States:         session.NewStateSealer(secret, clk),
		Memory:         prefs.New(records, limits, clk),
		Cats:           cats,
		Providers:      providers,
		DefaultCat:     defaultCat,
		Cookies:        cookies,
		AllowedOrigins: origins,
		PublicOrigin:   publicOrigin,
		PostLoginURL:   e.get("CATSRV_POST_LOGIN_URL", "/"),
		RateLimit:      rateLimit,
	}, nil
}

// admins reads CATSRV_ADMINS: comma-separated "<provider>:<subject>"
// accounts whose logins get the admin role.
func (e environ) admins() ([]string, error) {
	var out []string
	for _, entry := range strings.Split(e.get("CATSRV_ADMINS", ""), ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		provider, subject, ok := strings.Cut(entry, ":")
		if !ok || subject == "" || !slices.Contains(auth.Providers, provider) {
			return nil, fmt.Errorf("CATSRV_ADMINS: %q is not <provider>:<subject> with a provider of %v", entry, auth.Providers)
		}
		out = append(out, entry)
	}
	return out, nil
}

// publicOrigin is the origin of CATSRV_PUBLIC_URL when it is set: the
// only origin the CSRF check takes for the server's own. Unset, each
// request's own origin is used (see httpapi.AuthDeps.PublicOrigin).
func (e environ) publicOrigin() (string, error) {
	raw := e.get("CATSRV_PUBLIC_URL", "")
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("CATSRV_PUBLIC_URL %q is not an http or https URL", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// cookiePolicy reads CATSRV_COOKIE_SAMESITE, CATSRV_COOKIE_DOMAIN and
// CATSRV_COOKIE_INSECURE; the last is refused unless the server's public
// URL is plain http on a loopback host.
func (e environ) cookiePolicy(publicURL string) (httpapi.CookiePolicy, error) {
	var p httpapi.CookiePolicy
	switch strings.ToLower(e.get("CATSRV_COOKIE_SAMESITE", "lax")) {
	case "lax":
		p.SameSite = http.SameSiteLaxMode
	case "strict":
		p.SameSite = http.SameSiteStrictMode
	default:
		return p, fmt.Errorf("CATSRV_COOKIE_SAMESITE must be lax or strict")
	}
	p.Domain = e.get("CATSRV_COOKIE_DOMAIN", "")
	insecure, err := strconv.ParseBool(e.get("CATSRV_COOKIE_INSECURE", "false"))
	if err != nil {
		return p, fmt.Errorf("CATSRV_COOKIE_INSECURE must be true or false")
	}
	if insecure {
		u, _ := url.Parse(publicURL)
		host := u.Hostname()
		if u.Scheme != "http" || (host != "localhost" && host != "127.0.0.1" && host != "::1") {
			return p, fmt.Errorf("CATSRV_COOKIE_INSECURE=true is only for plain-http development on localhost (CATSRV_PUBLIC_URL is %s)", publicURL)
		}
		p.Insecure = true
	}
	return p, nil
}

// allowedOrigins is the union of every CAT's security.cors.allowed_origins
// and CATSRV_CORS_ALLOWED_ORIGINS (comma-separated).
func (e environ) allowedOrigins(cats []catconfig.Cat) ([]string, error) {
	var out []string
	for _, c := range cats {
		out = append(out, c.Security.CORS.AllowedOrigins...)
	}
	for o := range strings.SplitSeq(e.get("CATSRV_CORS_ALLOWED_ORIGINS", ""), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if !catconfig.ValidOrigin(o) {
			return nil, fmt.Errorf("CATSRV_CORS_ALLOWED_ORIGINS: %q is not an origin: want scheme://host[:port], no wildcard", o)
		}
		out = append(out, o)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// providers builds the providers whose credentials are set.
func (e environ) providers(publicURL string, logger *slog.Logger) (map[string]ports.IdentityProvider, error) {
	out := map[string]ports.IdentityProvider{}
	for _, name := range auth.Providers {
		vars := providerVars[name]
		var missing []string
		for _, v := range vars.required {
			if e.get(v, "") == "" {
				missing = append(missing, v)
			}
		}
		if len(missing) == len(vars.required) {
			logger.Info("identity provider not configured", "provider", name)
			continue
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s is half configured: set %s too (or unset its other variables)", name, strings.Join(missing, ", "))
		}
		prefix := "CATSRV_" + strings.ToUpper(name) + "_"
		c := identity.Config{
			ClientID:    e.get(prefix+"CLIENT_ID", ""),
			RedirectURL: e.get(prefix+"REDIRECT_URI", publicURL+httpapi.AuthPrefix+"/"+name+"/callback"),
			BaseURL:     e.get(prefix+"BASE_URL", ""),
		}
		var p ports.IdentityProvider
		var err error
		switch name {
		case auth.ProviderA:
			c.ClientSecret = e.get(prefix+"API_KEY", "")
			p, err = identity.NewProviderA(c)
		case auth.ProviderB:
			c.ClientSecret = e.get(prefix+"CLIENT_SECRET", "")
			p, err = identity.NewProviderB(c)
		case auth.ProviderC:
			c.ClientSecret = e.get(prefix+"CLIENT_SECRET", "")
			p, err = identity.NewProviderC(c, e.get(prefix+"TENANT_ID", ""))
		}
		if err != nil {
			return nil, fmt.Errorf("configuring %s: %w", name, err)
		}
		logger.Info("identity provider configured", "provider", name, "redirect_uri", c.RedirectURL)
		out[name] = p
	}
	return out, nil
}
