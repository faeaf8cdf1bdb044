package config

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/catsrv/catsrv/adapters/oidc"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
)

// Bounds of settings.
const (
	minMemoryBytes = 1024
	maxMemoryBytes = 16 << 20
	maxAuthBurst   = 100000
	minIngestBytes = 1024
	maxIngestBytes = 1 << 30
	maxIngestLines = 1000000
	maxWholeLists  = 64
	maxRate        = 1e6
)

// musts says, by variable, what a setting's value must be: the error of a
// value that does not parse or is out of bounds.
var musts = map[string]string{
	"CATSRV_METRICS_ADDR":         "must be a listen address HOST:PORT (e.g. 127.0.0.1:9090)",
	"OTEL_EXPORTER_OTLP_ENDPOINT": "must be the http or https base URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318)",
	"CATSRV_COOKIE_SAMESITE":      "must be lax or strict",
	"CATSRV_COOKIE_INSECURE":      "must be true or false",
	"CATSRV_REFRESH_TTL":          "must be a duration of at least 1h, e.g. 720h",
	"CATSRV_MEMORY_MAX_BYTES":     fmt.Sprintf("must be a number of bytes between %d and %d", minMemoryBytes, maxMemoryBytes),
	"CATSRV_INGEST_MAX_BYTES":     fmt.Sprintf("must be a number of bytes between %d and %d", minIngestBytes, maxIngestBytes),
	"CATSRV_INGEST_MAX_LINES":     fmt.Sprintf("must be a number of interactions between 1 and %d", maxIngestLines),
	"CATSRV_RAW_WHOLE_LISTS":      fmt.Sprintf("must be a number of requests between 1 and %d", maxWholeLists),
	"CATSRV_AUTH_RATE_LIMIT":      "must be a number of requests per second per client address (e.g. 1 or 0.5), or off",
	"CATSRV_AUTH_RATE_BURST":      fmt.Sprintf("must be a whole number of requests between 1 and %d", maxAuthBurst),
	"CATSRV_AUDIT_RETENTION":      "must be whole days (90d) or a duration of at least 1h (2160h), or off",
	"CATSRV_CAT_CONFIG_POLL":      "must be a duration between 50ms and 1m, e.g. 500ms",
	"CATSRV_INDEX_POLL":           "must be a duration between 50ms and 1m, e.g. 250ms",
	"CATSRV_RETENTION_INTERVAL":   "must be a duration of at least 1m (e.g. 1h), or off",
	"CATSRV_WAREHOUSE":            "must be index or sql",
	"CATSRV_MCP_EAGER_START":      "must be true or false",
}

// Validate checks every setting of a loaded configuration and returns the
// first error: it names the variable and what it must be.
func (c *Config) Validate() error {
	if c.PublicURL != "" && !httpURL(c.PublicURL) {
		return fmt.Errorf("CATSRV_PUBLIC_URL %q is not an http or https URL", c.PublicURL)
	}
	if _, err := url.ParseRequestURI(c.publicURL()); err != nil {
		return fmt.Errorf("CATSRV_PUBLIC_URL %q is not a URL", c.publicURL())
	}
	if err := c.validateProviders(); err != nil {
		return err
	}
	if err := c.validateOIDC(); err != nil {
		return err
	}
	known := append(slices.Clone(auth.Providers), c.OIDCProviders...)
	for _, entry := range c.Admins {
		provider, subject, ok := strings.Cut(entry, ":")
		if !ok || subject == "" || !slices.Contains(known, provider) {
			return fmt.Errorf("CATSRV_ADMINS: %q is not <provider>:<subject> with a provider of %v", entry, known)
		}
	}
	for _, o := range c.CORSAllowedOrigins {
		if !catconfig.ValidOrigin(o) {
			return fmt.Errorf("CATSRV_CORS_ALLOWED_ORIGINS: %q is not an origin: want scheme://host[:port], no wildcard", o)
		}
	}
	sameSite := strings.ToLower(c.CookieSameSite)
	for _, ch := range []struct {
		env string
		ok  bool
	}{
		{"CATSRV_METRICS_ADDR", c.MetricsAddr == "" || listenAddr(c.MetricsAddr)},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", c.OTLPEndpoint == "" || httpURL(c.OTLPEndpoint)},
		{"CATSRV_COOKIE_SAMESITE", sameSite == "lax" || sameSite == "strict"},
		{"CATSRV_REFRESH_TTL", c.RefreshTTL >= time.Hour},
		{"CATSRV_MEMORY_MAX_BYTES", c.MemoryMaxBytes >= minMemoryBytes && c.MemoryMaxBytes <= maxMemoryBytes},
		{"CATSRV_INGEST_MAX_BYTES", c.IngestMaxBytes >= minIngestBytes && c.IngestMaxBytes <= maxIngestBytes},
		{"CATSRV_INGEST_MAX_LINES", c.IngestMaxLines >= 1 && c.IngestMaxLines <= maxIngestLines},
		{"CATSRV_RAW_WHOLE_LISTS", c.RawWholeLists >= 1 && c.RawWholeLists <= maxWholeLists},
		{"CATSRV_AUTH_RATE_LIMIT", c.AuthRateLimit == 0 || (c.AuthRateLimit > 0 && c.AuthRateLimit <= maxRate)},
		{"CATSRV_AUTH_RATE_BURST", c.AuthRateBurst >= 1 && c.AuthRateBurst <= maxAuthBurst},
		{"CATSRV_AUDIT_RETENTION", c.AuditRetention == 0 || c.AuditRetention >= time.Hour},
		{"CATSRV_CAT_CONFIG_POLL", between(c.CatConfigPoll, 50*time.Millisecond, time.Minute)},
		{"CATSRV_INDEX_POLL", between(c.IndexPoll, 50*time.Millisecond, time.Minute)},
		{"CATSRV_RETENTION_INTERVAL", c.RetentionInterval == 0 || c.RetentionInterval >= time.Minute},
	} {
		if !ch.ok {
			return fmt.Errorf("%s %s", ch.env, musts[ch.env])
		}
	}
	if c.CookieInsecure {
		u, _ := url.Parse(c.publicURL())
		host := u.Hostname()
		if u.Scheme != "http" || (host != "localhost" && host != "127.0.0.1" && host != "::1") {
			return fmt.Errorf("CATSRV_COOKIE_INSECURE=true is only for plain-http development on localhost (CATSRV_PUBLIC_URL is %s)", c.publicURL())
		}
	}
	if c.Warehouse != "index" && c.Warehouse != "sql" {
		return fmt.Errorf("CATSRV_WAREHOUSE must be index or sql, not %q", c.Warehouse)
	}
	return nil
}

// validateProviders refuses a provider with some of its required variables
// set and not the others; one with none is left unconfigured.
func (c *Config) validateProviders() error {
	byName := map[string]any{auth.ProviderA: c.ProviderA, auth.ProviderB: c.ProviderB, auth.ProviderC: c.ProviderC}
	for _, name := range auth.Providers {
		v := reflect.ValueOf(byName[name])
		var required, missing []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Tag.Get("required") != "true" {
				continue
			}
			required = append(required, f.Tag.Get("env"))
			if v.Field(i).IsZero() {
				missing = append(missing, f.Tag.Get("env"))
			}
		}
		if len(missing) > 0 && len(missing) < len(required) {
			return fmt.Errorf("%s is half configured: set %s too (or unset its other variables)", name, strings.Join(missing, ", "))
		}
	}
	return nil
}

// reservedNames are taken by the three providers (and their variables,
// CATSRV_PROVIDER_A_… for "a") and by the other /api/v1/auth routes.
var reservedNames = []string{auth.ProviderA, auth.ProviderB, auth.ProviderC, "a", "b", "c",
	"providers", "refresh", "logout", "memory", "session", "me", "callback"}

// validateOIDC checks CATSRV_OIDC_PROVIDERS and each named provider's
// variables: a listed provider must have its issuer, client id and client
// secret.
func (c *Config) validateOIDC() error {
	for i, name := range c.OIDCProviders {
		switch {
		// The name is the route segment, the key of security.providers.<name>
		// and, upper-cased, the <NAME> of its variables.
		case !catconfig.ValidProviderName(name):
			return fmt.Errorf("CATSRV_OIDC_PROVIDERS: %q is not a provider name: want a lower-case letter, then up to 31 lower-case letters, digits or _", name)
		case slices.Contains(reservedNames, name):
			return fmt.Errorf("CATSRV_OIDC_PROVIDERS: %q is a reserved name (%s)", name, strings.Join(reservedNames, ", "))
		case slices.Contains(c.OIDCProviders[:i], name):
			return fmt.Errorf("CATSRV_OIDC_PROVIDERS names %q twice", name)
		}
		var p OIDCProvider
		if i < len(c.OIDC) {
			p = c.OIDC[i]
		}
		env := func(field string) string {
			f, _ := reflect.TypeFor[OIDCProvider]().FieldByName(field)
			return oidcEnv(f.Tag.Get("env"), name)
		}
		var missing []string
		for _, f := range []struct{ field, value string }{{"Issuer", p.Issuer}, {"ClientID", p.ClientID}, {"ClientSecret", p.ClientSecret.Value()}} {
			if f.value == "" {
				missing = append(missing, env(f.field))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("CATSRV_OIDC_PROVIDERS names %s: set %s", name, strings.Join(missing, ", "))
		}
		if err := oidc.CheckIssuer(p.Issuer); err != nil {
			return fmt.Errorf("%s: %w", env("Issuer"), err)
		}
		if p.RedirectURI != "" {
			if u, err := url.Parse(p.RedirectURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s %q is not an http or https URL", env("RedirectURI"), p.RedirectURI)
			}
		}
	}
	return nil
}

// complete derives what a valid configuration implies: the public URL and
// origin, the lower-case SameSite, a generic provider's display name and
// redirect URI when not set.
func (c *Config) complete() {
	if c.PublicURL != "" {
		u, _ := url.Parse(c.PublicURL)
		c.PublicOrigin = u.Scheme + "://" + u.Host
	}
	c.PublicURL = c.publicURL()
	c.CookieSameSite = strings.ToLower(c.CookieSameSite)
	for i := range c.OIDC {
		p := &c.OIDC[i]
		if p.DisplayName == "" {
			p.DisplayName = p.Name
		}
		if p.RedirectURI == "" {
			p.RedirectURI = c.PublicURL + "/api/v1/auth/" + p.Name + "/callback"
		}
	}
}

// publicURL is CATSRV_PUBLIC_URL, else http://<addr>, without a trailing
// slash.
func (c *Config) publicURL() string {
	raw := c.PublicURL
	if raw == "" {
		raw = "http://" + c.Addr
	}
	return strings.TrimSuffix(raw, "/")
}

func listenAddr(v string) bool {
	_, port, err := net.SplitHostPort(v)
	return err == nil && port != ""
}

// httpURL reports whether v is an http or https URL with a host and no
// user information.
func httpURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func between(d, lo, hi time.Duration) bool { return d >= lo && d <= hi }
