// Package base is the shared base of catsrv's HTTP app: the huma
// configuration and OpenAPI settings, the one error table, the middleware
// every request passes through (logging, panic recovery, CORS), the one
// authenticator with its CSRF origin check, the health probes and the
// dashboard's static page. The route packages (analyticsapi, chatapi,
// authapi) register their operations over it; it imports none of them.
package base

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
	"github.com/catsrv/catsrv/core/errs"
)

// Title is what the OpenAPI document says the API is (its info.version is
// the build's, buildinfo.Get().Version); License names its terms:
// "Proprietary", as the repository grants no license.
const (
	Title   = "catsrv"
	License = "Proprietary"
)

// AnalyticsPrefix is the path every analytics route starts with; a panic
// under it is answered with the analytics error code.
const AnalyticsPrefix = "/api/v1/analytics"

// BearerScheme names the security scheme in the OpenAPI document.
const BearerScheme = "bearer"

const description = `catsrv is the back end of chat assistants (CATs). ` +
	`The analytics routes (/api/v1/analytics) aggregate a CAT's logged interactions: totals, topic, model and persona ` +
	`distributions, and unique questions and answers. The chat routes (/api/v1/cat) answer messages by the CAT's ` +
	`chat mode, optionally streamed as Server-Sent Events, and keep each user's conversations.

Analytics of a CAT whose configuration does not set security.analytics.public ` +
	`need "Authorization: Bearer <JWT>" with role admin; chat and conversations need a user's token or session cookie. ` +
	`The login, refresh, logout and memory routes (/api/v1/auth) set cookies and redirect; they accept the bearer token ` +
	`or the catsrv_access session cookie, and docs/auth.md describes the flow in full.`

// NewAPI is the huma API on mux, with this API's configuration and a as
// the authenticator of every operation's Authenticate middleware. The
// route packages add their operations and tags; Finish completes it.
func NewAPI(mux *http.ServeMux, a *Authenticator) huma.API {
	api := humago.New(mux, config())
	api.UseMiddleware(WithAuthenticator(a))
	return api
}

// Finish completes the document once every operation is registered (the
// error responses huma gives by itself, no unused schema) and returns the
// whole handler: mux behind the CORS policy of origins, the tracing and
// request metrics of in (each nil: none), the request logging and the
// panic recovery.
func Finish(api huma.API, mux *http.ServeMux, origins OriginPolicy, log *slog.Logger, in Instruments) http.Handler {
	DocumentHumaErrors(api) // of the operations registered, which huma serves
	documentConfinedRoles(api)
	PruneSchemas(api.OpenAPI())
	return NoSniff(Observe(log, Measure(in.Metrics, Trace(in.Tracer, WithCORS(origins, Compress(renderDocumentsOnce(mux)))))))
}

// NoSniff marks every response X-Content-Type-Options: nosniff, so that
// no browser reads a JSON error body that echoes the caller's input as
// HTML or script.
func NoSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// Instruments are the app's optional telemetry: request metrics and
// tracing.
type Instruments struct {
	Metrics *RequestMetrics
	Tracer  *Tracer
}

// config is huma's default configuration without the schema-link
// transformer (it would add "$schema" to every body, and the spec fixes the
// bodies' keys) and without the /schemas routes it serves; its JSON format
// streams the bodies that write themselves (JSONStreamer).
func config() huma.Config {
	cfg := huma.DefaultConfig(Title, buildinfo.Get().Version)
	cfg.CreateHooks = nil
	cfg.SchemasPath = ""
	cfg.DocsPath = "" // RegisterAPIDocs serves /docs from the binary, not from a CDN
	cfg.Formats = map[string]huma.Format{
		"application/json": jsonFormat,
		"json":             jsonFormat,
	}
	cfg.Info.Description = description
	cfg.Info.License = &huma.License{Name: License}
	// The server that serves the document: a relative URL, so clients
	// resolve it against wherever they read the document from.
	cfg.Servers = []*huma.Server{{URL: "/", Description: "The server that serves this document."}}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		BearerScheme: {
			Type:         "http",
			Scheme:       "bearer",
			BearerFormat: "JWT",
			Description:  "An access token (HS256 JWT) from `catsrv token`; role admin reads every CAT's analytics.",
		},
	}
	// The route packages and RegisterHealth append their tags.
	cfg.Tags = []*huma.Tag{}
	return cfg
}

// renderDocumentsOnce renders every form of the document (warmOpenAPI)
// on the first request for one, before serving it. huma renders them
// lazily into variables it does not guard, so two first requests at once
// would race; rendered under a sync.Once, they are only ever read after.
// Rendering on first use, not when the app is built, keeps building it
// cheap (the four forms cost about as much as the rest of the build): the
// tests build an app each.
func renderDocumentsOnce(mux http.Handler) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/openapi") {
			once.Do(func() { warmOpenAPI(mux) })
		}
		mux.ServeHTTP(w, r)
	})
}

// warmOpenAPI requests each form of the document once.
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

// Body wraps a response body the way huma expects an output.
type Body[T any] struct {
	Body T
}

// NonNil makes an empty list encode as [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteJSON writes v as the JSON body of status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := JSONLine(v)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// JSONLine is v as JSON and a newline, as WriteJSON writes it.
func JSONLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// requestKey carries the *http.Request from the middleware to handlers
// that need more of it than huma's inputs (authentication by cookie with
// its CSRF check, the SSE handlers' own responses).
type requestKey struct{}

// responseKey carries the http.ResponseWriter the same way.
type responseKey struct{}

// WithRequest stashes the request and the response writer, and marks every
// answer uncacheable: they carry personal data. The chat and auth routes
// list it first.
func WithRequest(ctx huma.Context, next func(huma.Context)) {
	r, w := humago.Unwrap(ctx)
	ctx.SetHeader("Cache-Control", "no-store")
	ctx = huma.WithValue(ctx, requestKey{}, r)
	next(huma.WithValue(ctx, responseKey{}, w))
}

// RequestOf returns the request WithRequest stored, for what huma's inputs
// do not carry: the peer address and user agent the audit log records,
// the cookies, the Accept header, the bodies read as they are.
func RequestOf(ctx context.Context) (*http.Request, error) {
	r, ok := ctx.Value(requestKey{}).(*http.Request)
	if !ok {
		return nil, errs.New(errs.KindInternal, "route registered without the request middleware")
	}
	return r, nil
}

// ResponseOf returns the response writer WithRequest stored, nil without
// it.
func ResponseOf(ctx context.Context) http.ResponseWriter {
	w, _ := ctx.Value(responseKey{}).(http.ResponseWriter)
	return w
}
