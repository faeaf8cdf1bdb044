package telemetry_test

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/core/chat"
)

// TestModelSpansFollowGenAI: a call of the real adapter against the
// scripted server, whole or streamed, is one client span named "chat
// <model>" with the GenAI attributes: what was asked, what answered, why
// it stopped, the tokens each way and the conversation.
func TestModelSpansFollowGenAI(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := openaitest.New(openaitest.Steps(openaitest.Reply{Text: "Hi there.", Usage: 30}))
			t.Cleanup(srv.Close)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			m := telemetry.TracedChatModel(tp.Tracer("test"), openai.New(openai.Options{}))
			req := chat.ModelRequest{Cat: "demo", ConversationID: "conv-1", BaseURL: srv.BaseURL(), Model: "m-7", Timeout: 5 * time.Second,
				Messages: []chat.Message{{Role: chat.RoleUser, Content: "secret question"}}}
			var err error
			if stream {
				_, err = m.Stream(t.Context(), req, func(string) error { return nil })
			} else {
				_, err = m.Complete(t.Context(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			spans := rec.Ended()
			if len(spans) != 1 || spans[0].Name() != "chat m-7" || spans[0].SpanKind() != trace.SpanKindClient {
				t.Fatalf("spans %v", spans)
			}
			got := map[attribute.Key]attribute.Value{}
			for _, kv := range spans[0].Attributes() {
				got[kv.Key] = kv.Value
			}
			want := map[attribute.Key]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m-7",
				"gen_ai.response.model": "m-7", "gen_ai.conversation.id": "conv-1",
				"gen_ai.usage.input_tokens": int64(15), "gen_ai.usage.output_tokens": int64(15), "catsrv.outcome": "ok",
			}
			for k, v := range want {
				if got[k].AsInterface() != v {
					t.Errorf("%s = %v, want %v", k, got[k].AsInterface(), v)
				}
			}
			if r := got["gen_ai.response.finish_reasons"].AsStringSlice(); len(r) != 1 || r[0] != "stop" {
				t.Errorf("finish reasons %v, want [stop]", r)
			}
			for k, v := range got {
				if v.String() == "secret question" {
					t.Errorf("the span holds the message in %s", k)
				}
			}
		})
	}
}
