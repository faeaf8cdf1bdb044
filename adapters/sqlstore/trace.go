package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Traced makes each database call a client span of tracer, child of the
// span in the call's context: on PostgreSQL every statement pgx runs (a
// pgx QueryTracer), on SQLite every query bun runs (a bun query hook).
// A span is named by the statement's operation ("db SELECT"), with
// db.system.name and db.operation.name: never the statement's text or
// arguments, which may hold users' data. A nil tracer traces nothing.
func Traced(tracer trace.Tracer) Option {
	return func(s *Store) { s.tracer = tracer }
}

// dbSpanPrefix starts the name of every database span.
const dbSpanPrefix = "db "

// operation is the first word of a statement, upper-cased: SELECT,
// INSERT, BEGIN, COPY, WITH, ...; "query" when there is none.
func operation(stmt string) string {
	stmt = strings.TrimLeft(stmt, " \t\r\n(")
	end := strings.IndexAny(stmt, " \t\r\n(;")
	if end < 0 {
		end = len(stmt)
	}
	if end == 0 || end > 16 {
		return "query"
	}
	return strings.ToUpper(stmt[:end])
}

func startDBSpan(ctx context.Context, tracer trace.Tracer, system, op string) context.Context {
	ctx, _ = tracer.Start(ctx, dbSpanPrefix+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", system),
		attribute.String("db.operation.name", op),
	))
	return ctx
}

func endDBSpan(ctx context.Context, err error) {
	span := trace.SpanFromContext(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !errors.Is(err, pgx.ErrNoRows) {
		span.SetStatus(codes.Error, "database call failed")
	}
	span.End()
}

// pgxTracer is the pgx QueryTracer of Traced.
type pgxTracer struct{ tracer trace.Tracer }

func (t pgxTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return startDBSpan(ctx, t.tracer, "postgresql", operation(data.SQL))
}

func (pgxTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	endDBSpan(ctx, data.Err)
}

// bunTracer is the bun query hook of Traced (SQLite).
type bunTracer struct{ tracer trace.Tracer }

func (t bunTracer) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	op := e.Operation()
	if op == "" {
		op = operation(e.Query)
	}
	return startDBSpan(ctx, t.tracer, "sqlite", strings.ToUpper(op))
}

func (bunTracer) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	endDBSpan(ctx, e.Err)
}
