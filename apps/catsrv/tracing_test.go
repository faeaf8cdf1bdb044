package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
)

// otlpReceiver is an in-process OTLP/HTTP collector: it accepts protobuf
// exports at /v1/traces and keeps their spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	attrs map[string]string // the resource's string attributes
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			o.attrs[a.GetKey()] = a.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			o.spans = append(o.spans, ss.GetSpans()...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spanAttrs returns a span's attributes as text.
func spanAttrs(s *tracepb.Span) map[string]any {
	out := map[string]any{}
	for _, a := range s.GetAttributes() {
		switch v := a.GetValue(); {
		case v.GetStringValue() != "":
			out[a.GetKey()] = v.GetStringValue()
		default:
			out[a.GetKey()] = v.GetIntValue()
		}
	}
	return out
}

// TestTracingExportsSpans: with OTEL_EXPORTER_OTLP_ENDPOINT set, the real
// binary sends its spans to the collector over OTLP/HTTP: one server span
// per request, named by route template, continuing a caller's
// traceparent, and the chat model's call as a child of its request's
// span. The last spans are sent when serve stops on SIGTERM.
func TestTracingExportsSpans(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{attrs: map[string]string{}}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	var modelCalls atomic.Int64
	llm := fakeModel(t, &modelCalls)
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "demo.yaml"), []byte("cat:\n  chat_mode: agent\n  agent:\n    base_url: "+llm.URL+"/v1\n    model: m-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL)
	base := srv.base
	user := issueToken(t, cfg, "alice", "user")

	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	if code, body, _ := send(t, nil, http.MethodGet, base+"/healthz", "", "traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01"); code != http.StatusOK {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, body, _ := send(t, nil, http.MethodGet, base+"/api/v1/cat/conversations/conv-404?catname=demo", "", "Authorization", "Bearer "+user); code != http.StatusNotFound {
		t.Fatalf("conversation: %d %s", code, body)
	}
	if code, body, _ := send(t, nil, http.MethodPost, base+"/api/v1/cat/chat?catname=demo", `{"message":"hello"}`, "Authorization", "Bearer "+user); code != http.StatusOK {
		t.Fatalf("chat: %d %s", code, body)
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.logs.String())
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if recv.attrs["service.name"] != "catsrv" || recv.attrs["service.version"] != buildinfo.Dev {
		t.Errorf("resource attributes %v, want service.name catsrv, service.version %s", recv.attrs, buildinfo.Dev)
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range recv.spans {
		byName[s.GetName()] = append(byName[s.GetName()], s)
	}
	one := func(name string) *tracepb.Span {
		t.Helper()
		if len(byName[name]) != 1 {
			var names []string
			for n := range byName {
				names = append(names, n)
			}
			t.Fatalf("%d spans named %q; spans: %v", len(byName[name]), name, names)
		}
		return byName[name][0]
	}
	health := one("GET /healthz")
	if got := hex.EncodeToString(health.GetTraceId()); got != callerTrace {
		t.Errorf("the healthz span is in trace %s, not the caller's %s", got, callerTrace)
	}
	if a := spanAttrs(health); a["http.route"] != "/healthz" || a["http.response.status_code"] != int64(200) || health.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("healthz span: kind %v, attributes %v", health.GetKind(), a)
	}
	conv := one("GET /api/v1/cat/conversations/{id}")
	if a := spanAttrs(conv); a["http.route"] != "/api/v1/cat/conversations/{id}" || a["http.response.status_code"] != int64(404) {
		t.Errorf("conversation span attributes %v", a)
	}
	chatSpan := one("POST /api/v1/cat/chat")
	model := one("chat m-1")
	if !bytes.Equal(model.GetTraceId(), chatSpan.GetTraceId()) || !bytes.Equal(model.GetParentSpanId(), chatSpan.GetSpanId()) {
		t.Errorf("the model's span is not a child of the chat request's span")
	}
	if a := spanAttrs(model); a["catsrv.outcome"] != "ok" || a["gen_ai.request.model"] != "m-1" || a["gen_ai.conversation.id"] == nil || model.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("model span: kind %v, attributes %v", model.GetKind(), a)
	}
	var dbSpans int
	for _, s := range recv.spans {
		if bytes.Equal(s.GetTraceId(), chatSpan.GetTraceId()) && s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT &&
			strings.HasPrefix(s.GetName(), "db ") && spanAttrs(s)["db.system.name"] == "sqlite" {
			dbSpans++
		}
	}
	if dbSpans == 0 {
		t.Errorf("the chat request made no database span")
	}
	for _, s := range recv.spans {
		if bytes.Contains([]byte(s.GetName()), []byte("conv-404")) {
			t.Errorf("a span name holds the raw URL: %s", s.GetName())
		}
	}
	if n := modelCalls.Load(); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
}
