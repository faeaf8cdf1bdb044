package base

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTraceInTheChain: in Finish's order (Observe, Measure, Trace, mux)
// each request is one span named by its route template, with its status,
// a 5xx or a panic an error span; the request log and the metrics still
// see the route the mux matched under Trace.
func TestTraceInTheChain(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tracer := &Tracer{Tracer: provider.Tracer("test"), Propagator: propagation.TraceContext{}}
	m, err := NewRequestMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("POST /boom", func(http.ResponseWriter, *http.Request) { panic("broken") })
	mux.HandleFunc("GET /typo", func(w http.ResponseWriter, r *http.Request) {
		markClientFault(r.Context()) // as the error table does for the spec's 500 to a caller's mistake
		w.WriteHeader(http.StatusInternalServerError)
	})
	var logs bytes.Buffer
	h := Observe(slog.New(slog.NewJSONHandler(&logs, nil)), Measure(m, Trace(tracer, mux)))
	for _, req := range []struct{ method, target string }{{http.MethodGet, "/items/9"}, {http.MethodPost, "/boom"}, {http.MethodGet, "/nope"}, {http.MethodGet, "/typo"}} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.target, nil))
	}

	type want struct {
		name   string
		status int64
		failed bool
	}
	wants := []want{{"GET /items/{id}", 200, false}, {"POST /boom", 500, true}, {"GET unmatched", 404, false}, {"GET /typo", 500, false}}
	ended := spans.Ended()
	if len(ended) != len(wants) {
		t.Fatalf("%d spans, want %d", len(ended), len(wants))
	}
	for i, s := range ended {
		w := wants[i]
		var status int64
		for _, a := range s.Attributes() {
			if a.Key == "http.response.status_code" {
				status = a.Value.AsInt64()
			}
		}
		if s.Name() != w.name || status != w.status || (s.Status().Code == codes.Error) != w.failed {
			t.Errorf("span %d: %q status %d (%v), want %q %d error %v", i, s.Name(), status, s.Status().Code, w.name, w.status, w.failed)
		}
	}
	var routes []string
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var l struct{ Msg, Route string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Msg == "request" {
			routes = append(routes, l.Route)
		}
	}
	if strings.Join(routes, " ") != "/items/{id} /boom unmatched /typo" {
		t.Errorf("request log routes %v, want the mux's patterns", routes)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues(http.MethodGet, "/items/{id}", "200")); got != 1 {
		t.Errorf("the metrics counted %v requests of /items/{id}, want 1", got)
	}
	for status, want := range map[string]float64{"500": 1, ClientFaultStatus: 0} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(http.MethodPost, "/boom", status)); got != want {
			t.Errorf("/boom status %s counted %v, want %v", status, got, want)
		}
	}
	for status, want := range map[string]float64{"500": 0, ClientFaultStatus: 1} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(http.MethodGet, "/typo", status)); got != want {
			t.Errorf("/typo status %s counted %v, want %v", status, got, want)
		}
	}
}
