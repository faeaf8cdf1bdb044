package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/oauth"
	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// authDeps builds the /api/v1/auth dependencies from the configuration
// and the CAT configuration. A provider without credentials is left
// unconfigured (its routes answer 503). audit decorates the audit log the
// sessions record their events in (the login metrics); nil leaves it as
// it is.
func authDeps(ctx context.Context, cfg *config.Config, cats ports.CatDirectory, toks *tokens.Service, store *sqlstore.Store, logger *slog.Logger,
	audit func(ports.AuditLog) (ports.AuditLog, error),
) (*authapi.Deps, error) {
	records, err := authsql.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("auth tables: %w", err)
	}
	var auditLog ports.AuditLog = records
	if audit != nil {
		if auditLog, err = audit(records); err != nil {
			return nil, err
		}
	}
	configured, err := cats.Cats(ctx)
	if err != nil {
		return nil, err
	}
	providers, err := identityProviders(cfg, logger)
	if err != nil {
		return nil, err
	}
	generic, err := oidcProviders(ctx, cfg, providers, logger)
	if err != nil {
		return nil, err
	}
	limits := prefs.DefaultLimits
	limits.MaxTotalBytes = cfg.MemoryMaxBytes
	limits.MaxValueBytes = min(limits.MaxValueBytes, cfg.MemoryMaxBytes)
	defaultCat := cfg.AuthDefaultCat
	if defaultCat == "" && len(configured) > 0 {
		defaultCat = configured[0].Name
	}
	cookies := authapi.CookiePolicy{SameSite: http.SameSiteLaxMode, Domain: cfg.CookieDomain, Insecure: cfg.CookieInsecure}
	if cfg.CookieSameSite == "strict" {
		cookies.SameSite = http.SameSiteStrictMode
	}
	clk := clock.System{}
	return &authapi.Deps{
		Sessions: session.New(session.Deps{
			Tokens: toks, Users: records, Refresh: records, Revocations: records, Audit: auditLog,
			Cats: cats, Clock: clk, RefreshLifetime: cfg.RefreshTTL, Admins: cfg.Admins,
		}),
		States:         session.NewStateSealer([]byte(cfg.JWTSecret.Value()), clk),
		Memory:         prefs.New(records, limits, clk),
		Cats:           cats,
		Providers:      providers,
		OIDC:           generic,
		DefaultCat:     defaultCat,
		Cookies:        cookies,
		AllowedOrigins: allowedOrigins(cfg, configured),
		PublicOrigin:   cfg.PublicOrigin,
		PostLoginURL:   cfg.PostLoginURL,
		RateLimit:      authRateLimit(cfg),
	}, nil
}

// allowedOrigins is the union of every CAT's security.cors.allowed_origins
// and CATSRV_CORS_ALLOWED_ORIGINS.
func allowedOrigins(cfg *config.Config, cats []catconfig.Cat) []string {
	out := slices.Clone(cfg.CORSAllowedOrigins)
	for _, c := range cats {
		out = append(out, c.Security.CORS.AllowedOrigins...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// identityProviders builds the providers whose credentials are set.
func identityProviders(cfg *config.Config, logger *slog.Logger) (map[string]ports.IdentityProvider, error) {
	out := map[string]ports.IdentityProvider{}
	for _, name := range auth.Providers {
		c := oauth.Config{RedirectURL: cfg.PublicURL + authapi.Prefix + "/" + name + "/callback"}
		var redirect string
		var build func(oauth.Config) (ports.IdentityProvider, error)
		switch name {
		case auth.ProviderA:
			p := cfg.ProviderA
			c.ClientID, c.ClientSecret, c.BaseURL, c.Scopes, redirect = p.ClientID, p.APIKey.Value(), p.BaseURL, p.Scopes, p.RedirectURI
			build = func(c oauth.Config) (ports.IdentityProvider, error) { return oauth.NewProviderA(c) }
		case auth.ProviderB:
			p := cfg.ProviderB
			c.ClientID, c.ClientSecret, c.BaseURL, c.Scopes, redirect = p.ClientID, p.ClientSecret.Value(), p.BaseURL, p.Scopes, p.RedirectURI
			build = func(c oauth.Config) (ports.IdentityProvider, error) { return oauth.NewProviderB(c) }
		case auth.ProviderC:
			p := cfg.ProviderC
			c.ClientID, c.ClientSecret, c.BaseURL, c.Scopes, redirect = p.ClientID, p.ClientSecret.Value(), p.BaseURL, p.Scopes, p.RedirectURI
			build = func(c oauth.Config) (ports.IdentityProvider, error) { return oauth.NewProviderC(c, p.TenantID) }
		}
		if c.ClientID == "" {
			logger.Info("identity provider not configured", "provider", name)
			continue
		}
		if redirect != "" {
			c.RedirectURL = redirect
		}
		p, err := build(c)
		if err != nil {
			return nil, fmt.Errorf("configuring %s: %w", name, err)
		}
		logger.Info("identity provider configured", "provider", name, "redirect_uri", c.RedirectURL)
		out[name] = p
	}
	return out, nil
}

// oidcRetry is the least time between two discovery attempts of a generic
// provider that failed: a provider that is down is asked again at the
// first login after it, not at every one.
const oidcRetry = 5 * time.Second

// oidcProviders adds the generic OpenID Connect providers of
// CATSRV_OIDC_PROVIDERS to providers and returns their names and labels.
// Their discovery starts in the background: serve does not wait for it,
// and a provider that is down now is tried again at its next login.
func oidcProviders(ctx context.Context, cfg *config.Config, providers map[string]ports.IdentityProvider, logger *slog.Logger) ([]authapi.NamedProvider, error) {
	var out []authapi.NamedProvider
	for _, c := range cfg.OIDC {
		p, err := oidc.New(oidc.Config{
			Name: c.Name, Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret.Value(),
			RedirectURL: c.RedirectURI, Scopes: c.Scopes, RetryAfter: oidcRetry,
		})
		if err != nil {
			return nil, fmt.Errorf("configuring %s: %w", c.Name, err)
		}
		providers[c.Name] = p
		out = append(out, authapi.NamedProvider{Name: c.Name, DisplayName: c.DisplayName})
		logger.Info("identity provider configured", "provider", c.Name, "issuer", c.Issuer, "redirect_uri", c.RedirectURI)
		go func() {
			if err := p.Discover(ctx); err != nil {
				logger.Warn("identity provider discovery failed; tried again at the next login", "provider", c.Name, "error", err.Error())
			}
		}()
	}
	return out, nil
}
