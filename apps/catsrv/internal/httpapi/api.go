// Package httpapi is catsrv's HTTP surface: the huma API of the analytics
// routes, health and readiness probes, the OpenAPI document and docs page,
// and the middleware every request passes through (panic recovery and one
// structured log line). It translates between HTTP and the core; it holds no
// analytics logic of its own.
package httpapi

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/core/analytics/browse"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/ports"
)

// Title and Version are what the OpenAPI document says the API is;
// License names its terms: "Proprietary", as the repository grants no
// license.
const (
	Title   = "catsrv"
	Version = "0.2.0"
	License = "Proprietary"
)

// AnalyticsPrefix is the path every analytics route starts with.
const AnalyticsPrefix = "/api/v1/analytics"

// bearerScheme names the security scheme in the OpenAPI document.
const bearerScheme = "bearer"

const description = `catsrv is the back end of chat assistants (CATs). ` +
	`The analytics routes (/api/v1/analytics) aggregate a CAT's logged interactions: totals, topic, model and persona ` +
	`distributions, and unique questions and answers. The chat routes (/api/v1/cat) answer messages by the CAT's ` +
	`chat mode, optionally streamed as Server-Sent Events, and keep each user's conversations.

Analytics of a CAT whose configuration does not set security.analytics.public ` +
	`need "Authorization: Bearer <JWT>" with role admin; chat and conversations need a user's token or session cookie. ` +
	`The login, refresh, logout and memory routes (/api/v1/auth) set cookies and redirect; they accept the bearer token ` +
	`or the catsrv_access session cookie, and docs/auth.md describes the flow in full.`

// Deps are what the HTTP app needs; the composition root fills them.
type Deps struct {
	Reporter *reporter.Reporter
	Tokens   *tokens.Service
	// Ready answers /readyz; nil means always ready.
	Ready func(ctx context.Context) error
	// Logger receives the request lines and the causes of internal errors;
	// nil means slog.Default().
	Logger *slog.Logger
	// Browser reads the chat log for /interactions and /daily_counts;
	// those routes answer 500 without it.
	Browser ports.InteractionBrowser
	// Dashboard holds the admin page's built assets (index.html at its
	// root), served at / and /ui/; nil serves no page.
	Dashboard fs.FS
	// Auth serves /api/v1/auth (logins, sessions, memory) and the CORS
	// policy; nil answers those routes with 503.
	Auth *AuthDeps
	// Chat serves /api/v1/cat (chat, conversations, runtime
	// configuration); nil answers those routes with 503.
	Chat *ChatDeps
}

// server holds the dependencies the handlers share.
type server struct {
	reporter *reporter.Reporter
	tokens   *tokens.Service
	ready    func(ctx context.Context) error
	log      *slog.Logger
	browse   *browse.Service
	auth     *authAPI
}

// New builds the huma API and the full handler: the analytics routes,
// /healthz, /readyz, /openapi.json (3.1), /openapi-3.0.json, /docs, behind
// the request-logging and panic-recovery middleware. The API is returned for
// callers that want its OpenAPI document.
func New(d Deps) (huma.API, http.Handler) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &server{reporter: d.Reporter, tokens: d.Tokens, ready: d.Ready, log: log, browse: browse.New(d.Browser), auth: newAuthAPI(d.Auth, log)}
	mux := http.NewServeMux()
	api := humago.New(mux, config())
	api.UseMiddleware(withAuthenticator(s.authenticator()))
	registerAnalytics(api, s)
	registerHealth(api, s)
	registerInteractions(api, s)
	registerDashboard(mux, d.Dashboard)
	registerAuth(api, s.auth)
	c := newChatAPI(d.Chat, s)
	registerChat(api, c)
	registerConversations(api, c)
	registerConfig(api, c)
	documentHumaErrors(api) // of the operations above, which huma serves
	// The login flow's operations (start, callback, providers, refresh)
	// need no credentials: they declare no security of their own.
	declarePublic(api.OpenAPI(), AuthPrefix)
	pruneSchemas(api.OpenAPI())
	warmOpenAPI(mux)
	return api, observe(log, withCORS(s.auth.origins.allowed, mux))
}

// authenticator is the API's one authenticator: with authentication
// configured, the session service (revocations included) and the CSRF
// origins of its CORS allowlist; otherwise the bearer tokens alone.
func (s *server) authenticator() *authenticator {
	return &authenticator{sessions: s.auth.d.Sessions, tokens: s.tokens, origins: s.auth.origins}
}

// OpenAPIDocument returns the OpenAPI 3.1 document that /openapi.json
// serves, indented for reading, without any database or configuration: the
// handlers never run.
func OpenAPIDocument() ([]byte, error) {
	api, _ := New(Deps{})
	doc, err := json.MarshalIndent(api.OpenAPI(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(doc, '\n'), nil
}

// config is huma's default configuration without the schema-link
// transformer (it would add "$schema" to every body, and the spec fixes the
// bodies' keys) and without the /schemas routes it serves.
func config() huma.Config {
	cfg := huma.DefaultConfig(Title, Version)
	cfg.CreateHooks = nil
	cfg.SchemasPath = ""
	cfg.Formats = map[string]huma.Format{
		"application/json": huma.DefaultJSONFormat,
		"json":             huma.DefaultJSONFormat,
	}
	cfg.Info.Description = description
	cfg.Info.License = &huma.License{Name: License}
	// The server that serves the document: a relative URL, so clients
	// resolve it against wherever they read the document from.
	cfg.Servers = []*huma.Server{{URL: "/", Description: "The server that serves this document."}}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		bearerScheme: {
			Type:         "http",
			Scheme:       "bearer",
			BearerFormat: "JWT",
			Description:  "An access token (HS256 JWT) from `catsrv token`; role admin reads every CAT's analytics.",
		},
	}
	cfg.Tags = []*huma.Tag{
		{Name: tagAnalytics, Description: "Aggregates over a CAT's logged interactions."},
		{Name: tagHealth, Description: "Liveness and readiness probes."},
		{Name: tagChat, Description: "Chat messages, answered by the legacy pipeline or the agent model, optionally streamed."},
		{Name: tagConversations, Description: "The caller's conversations: list, read, rename, delete, search."},
		{Name: tagConfig, Description: "A CAT's effective configuration and its runtime changes (admin)."},
	}
	return cfg
}

// warmOpenAPI requests each form of the document once. huma renders them
// lazily into variables it does not guard, so two first requests at once
// would race; rendered here, before the handler is returned, they are only
// ever read while serving.
func warmOpenAPI(h http.Handler) {
	for _, path := range []string{"/openapi.json", "/openapi-3.0.json", "/openapi.yaml", "/openapi-3.0.yaml"} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, path, nil)
		if err != nil {
			continue
		}
		h.ServeHTTP(discard{header: http.Header{}}, req)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ header http.Header }

func (d discard) Header() http.Header       { return d.header }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
