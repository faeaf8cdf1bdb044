package base

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracer is what Trace needs of OpenTelemetry tracing.
type Tracer struct {
	Tracer trace.Tracer
	// Propagator reads the caller's trace context (W3C traceparent).
	Propagator propagation.TextMapPropagator
}

// Trace makes each request a server span, child of the caller's trace
// context if it sends one, named by its method and route template
// ("GET /api/v1/analytics/all", "GET unmatched"), never the raw URL, with
// the route and the status as attributes; a 5xx is an error span, unless it
// is the spec's 500 for a caller's mistake (its status stays unset). A nil
// tracer traces nothing. It goes outside the mux, inside Measure and
// Observe: the pattern the mux matched on the request Trace passes on is
// copied back to the request Trace was given, so that they see it too.
func Trace(t *Tracer, next http.Handler) http.Handler {
	if t == nil || t.Tracer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := t.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := t.Tracer.Start(ctx, "HTTP "+routeMethod(r), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method)))
		rec := &recorder{ResponseWriter: w}
		inner := r.WithContext(ctx)
		returned := false
		defer func() {
			r.Pattern = inner.Pattern
			status := rec.status()
			if !returned && !rec.wroteHeader {
				status = http.StatusInternalServerError
			}
			span.SetName(routeMethod(inner) + " " + route(inner))
			span.SetAttributes(attribute.String("http.route", route(inner)), attribute.Int("http.response.status_code", status))
			if status >= http.StatusInternalServerError && !isClientFault(inner) {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}()
		next.ServeHTTP(rec, inner)
		returned = true
	})
}
