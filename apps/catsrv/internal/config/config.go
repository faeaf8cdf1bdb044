// Package config loads catsrv's configuration once, at start-up, into one
// typed, validated Config: defaults, then the environment, then the
// command's flags (github.com/knadh/koanf/v2). Nothing else in catsrv reads
// the environment: the composition root (apps/catsrv) hands each adapter
// the values it needs.
//
// Every setting is a field tagged with its environment variable (`env`),
// its default (`default`) and, for the few that have one, its flag
// (`flag`); docs/operations.md lists them, and a test keeps the two in
// step. Load unmarshals them with koanf by those tags, then Validate
// checks the values (validate.go). Secrets (type Secret) come from the environment only, never from a
// flag or a file, and never print. The CATSRV_CAT__ and CATSRV_CATS__
// variables become catfiles overrides; the per-CAT YAML files remain the
// CAT configuration.
package config

import (
	"time"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
)

// Config is the whole configuration of a catsrv process.
type Config struct {
	ConfigDir string `env:"CATSRV_CONFIG_DIR" flag:"config" default:"./configs" usage:"directory of <catname>.yaml files"`
	DB        string `env:"CATSRV_DB" flag:"db" default:"sqlite:./data/catsrv.db" usage:"database: sqlite:PATH or postgres://..."`
	Addr      string `env:"CATSRV_ADDR" flag:"addr" default:"127.0.0.1:8080" usage:"listen address HOST:PORT"`
	// MetricsAddr is the listen address of GET /metrics (Prometheus), a
	// listener of its own apart from the API; empty serves no metrics.
	MetricsAddr string `env:"CATSRV_METRICS_ADDR"`
	// OTLPEndpoint is the OTLP/HTTP collector spans are sent to, a base
	// URL (OpenTelemetry's own variable); empty traces nothing.
	OTLPEndpoint string `env:"OTEL_EXPORTER_OTLP_ENDPOINT"`

	// JWTSecret signs access tokens; serve and token refuse to run without
	// it (tokens.New checks its length).
	JWTSecret Secret `env:"CATSRV_JWT_SECRET"`
	// JWTSecretFile holds the secret when CATSRV_JWT_SECRET is unset and
	// the file exists (readJWTSecretFile): make run keeps its generated
	// secret there.
	JWTSecretFile string `env:"CATSRV_JWT_SECRET_FILE" default:"./data/jwt-secret"`
	JWTIssuer     string `env:"CATSRV_JWT_ISSUER" default:"catsrv"`
	JWTAudience   string `env:"CATSRV_JWT_AUDIENCE" default:"catsrv"`

	// PublicURL is the server's external URL, without a trailing slash:
	// CATSRV_PUBLIC_URL, else http://<Addr>. PublicOrigin is its origin
	// when CATSRV_PUBLIC_URL is set, else "".
	PublicURL    string `env:"CATSRV_PUBLIC_URL" default:"http://<addr>"`
	PublicOrigin string

	ProviderA ProviderA `env:",squash"`
	ProviderB ProviderB `env:",squash"`
	ProviderC ProviderC `env:",squash"`

	// OIDCProviders names the generic OpenID Connect providers; OIDC holds
	// each one's settings, from its CATSRV_PROVIDER_<NAME>_* variables, in
	// that order.
	OIDCProviders []string `env:"CATSRV_OIDC_PROVIDERS"`
	OIDC          []OIDCProvider

	// Admins are "<provider>:<subject>" accounts.
	Admins         []string `env:"CATSRV_ADMINS"`
	AuthDefaultCat string   `env:"CATSRV_AUTH_DEFAULT_CAT"`

	// CookieSameSite is "lax" or "strict".
	CookieSameSite     string   `env:"CATSRV_COOKIE_SAMESITE" default:"lax"`
	CookieDomain       string   `env:"CATSRV_COOKIE_DOMAIN"`
	CookieInsecure     bool     `env:"CATSRV_COOKIE_INSECURE" default:"false"`
	CORSAllowedOrigins []string `env:"CATSRV_CORS_ALLOWED_ORIGINS"`
	PostLoginURL       string   `env:"CATSRV_POST_LOGIN_URL" default:"/"`

	RefreshTTL     time.Duration `env:"CATSRV_REFRESH_TTL" default:"720h"`
	MemoryMaxBytes int           `env:"CATSRV_MEMORY_MAX_BYTES" default:"65536"`

	// AuthRateLimit is requests per second per client address; 0 is off.
	AuthRateLimit float64 `env:"CATSRV_AUTH_RATE_LIMIT" default:"1"`
	AuthRateBurst int     `env:"CATSRV_AUTH_RATE_BURST" default:"20"`
	// AuditRetention is how long audit events are kept; 0 is forever.
	AuditRetention time.Duration `env:"CATSRV_AUDIT_RETENTION" default:"90d"`
	// CatConfigPoll is how often serve reads the runtime CAT configuration
	// other instances saved.
	CatConfigPoll time.Duration `env:"CATSRV_CAT_CONFIG_POLL" default:"500ms"`
	// IndexPoll is how often the column index reads the rows other
	// processes committed.
	IndexPoll time.Duration `env:"CATSRV_INDEX_POLL" default:"250ms"`
	// RetentionInterval is how often the retention job (per-CAT
	// analytics.retention_days and chat.retention_days) runs; 0 is never.
	RetentionInterval time.Duration `env:"CATSRV_RETENTION_INTERVAL" default:"1h"`
	// IngestMaxBytes and IngestMaxLines bound one batch of POST
	// /api/v1/analytics/interactions: its body and its interactions.
	IngestMaxBytes int64 `env:"CATSRV_INGEST_MAX_BYTES" default:"16777216"`
	IngestMaxLines int   `env:"CATSRV_INGEST_MAX_LINES" default:"10000"`
	// RawWholeLists is how many /all and /all_legacy requests with whole
	// question and answer lists (no limit, or paged) are answered at once.
	RawWholeLists int `env:"CATSRV_RAW_WHOLE_LISTS" default:"1"`
	// Warehouse is "index" or "sql".
	Warehouse string `env:"CATSRV_WAREHOUSE" default:"index"`

	// MCPEagerStart starts every CAT's MCP servers (cat.agent.mcp_servers)
	// when serve starts, rather than at a turn's first use.
	MCPEagerStart bool `env:"CATSRV_MCP_EAGER_START" default:"false"`

	AgentAPIKey       Secret            `env:"CATSRV_AGENT_API_KEY"`
	AgentAPIKeysByCat map[string]Secret `env:"CATSRV_AGENT_API_KEY__<CAT>"` // by catfiles.EnvName

	EmbeddingsAPIKey       Secret            `env:"CATSRV_EMBEDDINGS_API_KEY"`
	EmbeddingsAPIKeysByCat map[string]Secret `env:"CATSRV_EMBEDDINGS_API_KEY__<CAT>"` // by catfiles.EnvName

	// CatOverrides are the CATSRV_CAT__ variables, then the CATSRV_CATS__
	// ones, each group sorted by name.
	CatOverrides []catfiles.Override `env:"CATSRV_CAT__<SECTION>__<KEY>,CATSRV_CATS__<NAME>__<SECTION>__<KEY>"`

	// GOGC is Go's own variable: when it is unset, import sets a higher
	// target and serve a lower one.
	GOGC string `env:"GOGC"`
	// GOMEMLIMIT is Go's own variable: import sets a soft memory limit
	// when it is unset.
	GOMEMLIMIT string `env:"GOMEMLIMIT"`

	// environ is the environment Load read: ExpandMCP fills ${NAME} from
	// it, MCPEnv hands it to stdio MCP servers.
	// A pointer: fmt prints a nested pointer as its address, so the
	// secrets in it never print with the Config.
	environ *environment
}

// environment is the process environment, secrets among it.
type environment struct{ vars []string }

// ProviderA is provider_a's credentials and endpoints.
type ProviderA struct {
	ClientID    string `env:"CATSRV_PROVIDER_A_CLIENT_ID" required:"true"`
	APIKey      Secret `env:"CATSRV_PROVIDER_A_API_KEY" required:"true"`
	BaseURL     string `env:"CATSRV_PROVIDER_A_BASE_URL" required:"true"`
	RedirectURI string `env:"CATSRV_PROVIDER_A_REDIRECT_URI" default:"<public url>/api/v1/auth/provider_a/callback"`
	// Scopes, space-separated; none sends no scope parameter.
	Scopes []string `env:"CATSRV_PROVIDER_A_SCOPES" sep:" "`
}

// ProviderB is provider_b's (Google's) credentials and endpoints.
type ProviderB struct {
	ClientID     string `env:"CATSRV_PROVIDER_B_CLIENT_ID" required:"true"`
	ClientSecret Secret `env:"CATSRV_PROVIDER_B_CLIENT_SECRET" required:"true"`
	RedirectURI  string `env:"CATSRV_PROVIDER_B_REDIRECT_URI" default:"<public url>/api/v1/auth/provider_b/callback"`
	BaseURL      string `env:"CATSRV_PROVIDER_B_BASE_URL"`
	// Scopes, space-separated.
	Scopes []string `env:"CATSRV_PROVIDER_B_SCOPES" default:"openid email profile" sep:" "`
}

// ProviderC is provider_c's (Azure AD's) credentials and endpoints.
type ProviderC struct {
	ClientID     string `env:"CATSRV_PROVIDER_C_CLIENT_ID" required:"true"`
	ClientSecret Secret `env:"CATSRV_PROVIDER_C_CLIENT_SECRET" required:"true"`
	TenantID     string `env:"CATSRV_PROVIDER_C_TENANT_ID" required:"true"`
	RedirectURI  string `env:"CATSRV_PROVIDER_C_REDIRECT_URI" default:"<public url>/api/v1/auth/provider_c/callback"`
	BaseURL      string `env:"CATSRV_PROVIDER_C_BASE_URL"`
	// Scopes, space-separated.
	Scopes []string `env:"CATSRV_PROVIDER_C_SCOPES" default:"openid profile email User.Read" sep:" "`
}

// OIDCProvider is one generic OpenID Connect provider, named in
// CATSRV_OIDC_PROVIDERS; <NAME> in its variables is the name in upper
// case. Its fields' tags are templates: settings lists them, Load reads
// them per name.
type OIDCProvider struct {
	Name         string
	Issuer       string   `env:"CATSRV_PROVIDER_<NAME>_ISSUER" required:"true"`
	ClientID     string   `env:"CATSRV_PROVIDER_<NAME>_CLIENT_ID" required:"true"`
	ClientSecret Secret   `env:"CATSRV_PROVIDER_<NAME>_CLIENT_SECRET" required:"true"`
	Scopes       []string `env:"CATSRV_PROVIDER_<NAME>_SCOPES" default:"openid email profile" sep:" "`
	DisplayName  string   `env:"CATSRV_PROVIDER_<NAME>_DISPLAY_NAME" default:"<name>"`
	RedirectURI  string   `env:"CATSRV_PROVIDER_<NAME>_REDIRECT_URI" default:"<public url>/api/v1/auth/<name>/callback"`
}

// EmbeddingsKey returns the embeddings service's API key for a CAT
// (cat.knowledge.embeddings): CATSRV_EMBEDDINGS_API_KEY__<CAT>, even when
// empty, or else CATSRV_EMBEDDINGS_API_KEY; "" sends none.
func (c *Config) EmbeddingsKey(cat string) string {
	if k, ok := c.EmbeddingsAPIKeysByCat[catfiles.EnvName(cat)]; ok {
		return k.Value()
	}
	return c.EmbeddingsAPIKey.Value()
}

// AgentKey returns the agent model's API key for a CAT: its own
// (CATSRV_AGENT_API_KEY__<CAT>, even when empty) or else the one for every
// CAT; "" sends none.
func (c *Config) AgentKey(cat string) string {
	if k, ok := c.AgentAPIKeysByCat[catfiles.EnvName(cat)]; ok {
		return k.Value()
	}
	return c.AgentAPIKey.Value()
}
