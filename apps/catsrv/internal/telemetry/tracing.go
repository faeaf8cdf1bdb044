package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
)

// ServiceName is the service.name of catsrv's spans.
const ServiceName = "catsrv"

// Tracing is OpenTelemetry tracing to an OTLP/HTTP collector.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// NewTracing starts exporting spans, in batches, over OTLP/HTTP
// (protobuf) to the collector at endpoint: a base URL, as the standard
// OTEL_EXPORTER_OTLP_ENDPOINT, to which /v1/traces is added. Every trace
// is sampled, or follows its caller's sampling decision (a W3C
// traceparent). version is the service.version of the spans.
func NewTracing(ctx context.Context, endpoint, version string) (*Tracing, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the OTLP endpoint %q is not an http(s) URL", endpoint)
	}
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", ServiceName),
		attribute.String("service.version", version),
	)
	return &Tracing{provider: sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(time.Second)),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	)}, nil
}

// Tracer returns the tracer of catsrv's spans.
func (t *Tracing) Tracer() trace.Tracer { return t.provider.Tracer(ServiceName) }

// Propagator reads and writes W3C trace context headers.
func (t *Tracing) Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// Shutdown sends the spans not yet exported and stops, within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// tracedModel wraps each call of the model in a span.
type tracedModel struct {
	next   ports.ChatModel
	tracer trace.Tracer
}

// TracedChatModel decorates next so that each call is a client span
// following OpenTelemetry's GenAI conventions, child of the request's:
// named "chat <requested model>", with gen_ai.operation.name,
// gen_ai.provider.name, gen_ai.request.model, gen_ai.conversation.id and,
// once it ends, gen_ai.response.model, gen_ai.response.finish_reasons,
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens, with
// catsrv.call (complete or stream) and catsrv.outcome. Never the
// messages.
func TracedChatModel(tracer trace.Tracer, next ports.ChatModel) ports.ChatModel {
	return &tracedModel{next: next, tracer: tracer}
}

// Complete calls the model inside a span.
func (m *tracedModel) Complete(ctx context.Context, req chat.ModelRequest) (chat.Completion, error) {
	ctx, span := m.start(ctx, "complete", req)
	c, err := m.next.Complete(ctx, req)
	ended(span, c)
	end(ctx, span, err)
	return c, err
}

// Stream calls the model inside a span.
func (m *tracedModel) Stream(ctx context.Context, req chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
	ctx, span := m.start(ctx, "stream", req)
	c, err := m.next.Stream(ctx, req, onDelta)
	ended(span, c)
	end(ctx, span, err)
	return c, err
}

func (m *tracedModel) start(ctx context.Context, call string, req chat.ModelRequest) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameChat, semconv.GenAIProviderNameOpenAI,
		semconv.GenAIRequestModel(req.Model), attribute.String("catsrv.call", call),
	}
	if req.ConversationID != "" {
		attrs = append(attrs, semconv.GenAIConversationID(req.ConversationID))
	}
	return m.tracer.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// ended adds what the model answered to the span: the model that
// answered, why it stopped and the tokens it counted (a failed call
// reports what it got before failing).
func ended(span trace.Span, c chat.Completion) {
	if c.Model != "" {
		span.SetAttributes(semconv.GenAIResponseModel(c.Model))
	}
	if c.FinishReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(c.FinishReason))
	}
	span.SetAttributes(semconv.GenAIUsageInputTokens(int(c.InputTokens)), semconv.GenAIUsageOutputTokens(int(c.OutputTokens)))
}

// end ends the span with the call's outcome; a failure is an error span
// with the outcome's name, never the upstream's message.
func end(ctx context.Context, span trace.Span, err error) {
	o := outcome(ctx, err)
	span.SetAttributes(attribute.String("catsrv.outcome", o))
	if err != nil {
		span.SetStatus(codes.Error, o)
	}
	span.End()
}
