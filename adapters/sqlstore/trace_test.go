package sqlstore_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestTracedDatabaseCalls: with Traced, a database call made under a span
// is a client span, child of it, named by the statement's operation and
// carrying the database system, never the statement's text; without it,
// no span is made.
func TestTracedDatabaseCalls(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range []struct{ name, system string }{{"SQLite", "sqlite"}, {"PostgreSQL", "postgresql"}} {
		t.Run(b.name, func(t *testing.T) {
			dsn := sqltest.SQLiteDSN(t)
			if b.system == "postgresql" {
				dsn = sqltest.PostgresDSN(t)
			}
			spans := tracetest.NewSpanRecorder()
			tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("test")
			store, err := sqlstore.Open(t.Context(), dsn, sqlstore.Traced(tracer))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = store.Close() }()
			ctx, parent := tracer.Start(t.Context(), "request")
			if err := store.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			parent.End()
			var children []sdktrace.ReadOnlySpan
			for _, s := range spans.Ended() {
				if s.Parent().SpanID() == parent.SpanContext().SpanID() {
					children = append(children, s)
				}
			}
			if len(children) == 0 {
				t.Fatalf("no database span under the request's; spans: %d", len(spans.Ended()))
			}
			for _, s := range children {
				attrs := map[attribute.Key]string{}
				for _, a := range s.Attributes() {
					attrs[a.Key] = a.Value.AsString()
				}
				if !strings.HasPrefix(s.Name(), "db ") || s.SpanKind() != trace.SpanKindClient ||
					attrs["db.system.name"] != b.system || "db "+attrs["db.operation.name"] != s.Name() {
					t.Errorf("span %q kind %v attributes %v", s.Name(), s.SpanKind(), attrs)
				}
				if _, ok := attrs["db.query.text"]; ok {
					t.Errorf("span %q holds the statement's text", s.Name())
				}
			}
			if got := children[len(children)-1].Name(); got != "db SELECT" {
				t.Errorf("Ping's span is %q, want db SELECT", got)
			}

			before := len(spans.Ended())
			plain := sqltest.Open(t, dsn)
			if err := plain.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(spans.Ended()) - before; n != 0 {
				t.Errorf("a store without Traced made %d spans", n)
			}
		})
	}
}
