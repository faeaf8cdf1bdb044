// Package httpapi assembles catsrv's HTTP app: the route packages
// (analyticsapi, chatapi, docsapi, authapi, openaiapi) over the shared base (package base: the
// error table, middleware, authenticator, OpenAPI settings, health and the
// dashboard page), serving the OpenAPI document and docs page. It
// translates between HTTP and the core; it holds no analytics logic of its
// own.
package httpapi

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/docsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/openaiapi"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/ports"
)

// Deps are what the HTTP app needs; the composition root fills them.
type Deps struct {
	Reporter *reporter.Reporter
	Tokens   *tokens.Service
	// Ready answers /readyz; nil means always ready.
	Ready func(ctx context.Context) error
	// Logger receives the request lines and the causes of internal errors;
	// nil means slog.Default(). It is also the logger of Auth and Chat
	// when they set none.
	Logger *slog.Logger
	// Browser reads the chat log for /interactions and /daily_counts;
	// those routes answer 500 without it.
	Browser ports.InteractionBrowser
	// Ingest stores what POST /api/v1/analytics/interactions ingests (the
	// log the rollups read follow); nil answers that route 503.
	Ingest ports.InteractionLog
	// Usage counts /usage and /feedback (analyticsapi.Deps); nil answers
	// those routes 503.
	Usage ports.UsageCounter
	// IngestLimits bound one ingested batch (zero: the defaults).
	IngestLimits analyticsapi.IngestLimits
	// WholeLists is how many raw answers with whole lists are built at
	// once and WholeListWait how long others wait for a turn
	// (analyticsapi.Deps); zero takes the defaults.
	WholeLists    int
	WholeListWait time.Duration
	// Dashboard holds the admin page's built assets (index.html at its
	// root), served at / and /ui/; nil serves no page.
	Dashboard fs.FS
	// Auth serves /api/v1/auth (logins, sessions, memory) and the CORS
	// policy; nil answers those routes with 503.
	Auth *authapi.Deps
	// Chat serves /api/v1/cat (chat, conversations, runtime
	// configuration); nil answers those routes with 503.
	Chat *chatapi.Deps
	// Documents serves /api/v1/cat/documents; nil answers those routes
	// with 503.
	Documents *docsapi.Deps
	// Metrics counts and times every request (base.Measure); nil counts
	// none.
	Metrics *base.RequestMetrics
	// Tracer makes every request a span (base.Trace); nil traces none.
	Tracer *base.Tracer
}

// New builds the huma API and the full handler: the analytics, chat and
// auth routes, /healthz, /readyz, /openapi.json (3.1), /openapi-3.0.json,
// /docs and the dashboard, behind the request-logging, panic-recovery,
// request-metrics, tracing and CORS middleware. The API is returned for callers that want its OpenAPI
// document.
func New(d Deps) (huma.API, http.Handler) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	var ad authapi.Deps
	if d.Auth != nil {
		ad = *d.Auth
	}
	if ad.Logger == nil {
		ad.Logger = log
	}
	var cd chatapi.Deps
	if d.Chat != nil {
		cd = *d.Chat
	}
	if cd.Logger == nil {
		cd.Logger = log
	}
	// The one authenticator: with authentication configured, the session
	// service (revocations included) and the CSRF origins of its CORS
	// allowlist; otherwise the bearer tokens alone.
	origins := base.NewOriginPolicy(ad.AllowedOrigins, ad.PublicOrigin)
	mux := http.NewServeMux()
	api := base.NewAPI(mux, &base.Authenticator{Sessions: ad.Sessions, Tokens: d.Tokens, Origins: origins})
	// The order of registration is the order of the document's tags.
	analyticsapi.Register(api, analyticsapi.Deps{Reporter: d.Reporter, Browser: d.Browser, Logger: log, Log: d.Ingest, Usage: d.Usage, Ingest: d.IngestLimits, WholeLists: d.WholeLists, WholeListWait: d.WholeListWait})
	base.RegisterHealth(api, d.Ready, log)
	chatapi.Register(api, cd)
	var dd docsapi.Deps
	if d.Documents != nil {
		dd = *d.Documents
	}
	if dd.Logger == nil {
		dd.Logger = log
	}
	docsapi.Register(api, dd)
	authapi.Register(api, ad)
	openaiapi.Register(api, openaiapi.Deps{Service: cd.Service, Cats: cd.Config, Logger: log})
	base.RegisterDashboard(mux, d.Dashboard)
	base.RegisterAPIDocs(mux)
	return api, base.Finish(api, mux, origins, log, base.Instruments{Metrics: d.Metrics, Tracer: d.Tracer})
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

// UseSpecErrors makes huma's own errors take this API's shapes
// (base.UseSpecErrors). It returns a function that puts the previous ones
// back. Call it once at start-up, before serving.
func UseSpecErrors() (restore func()) { return base.UseSpecErrors() }
