package base

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestMeasure: requests are counted and timed by the mux's route pattern
// (never the raw path), method and the status sent, a panic as the 500
// Observe answers, an unknown method as "other".
func TestMeasure(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewRequestMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux.HandleFunc("POST /boom", func(http.ResponseWriter, *http.Request) { panic("broken") })
	h := Observe(slog.New(slog.NewTextHandler(io.Discard, nil)), Measure(m, mux))
	for _, req := range []struct{ method, target string }{
		{"GET", "/items/1"}, {"GET", "/items/2?name=secret"}, {"POST", "/items/3"},
		{"GET", "/nope/4"}, {"POST", "/boom"}, {"BREW", "/items/5"}, {"DELETE", "/items/6"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.target, nil))
	}
	want := map[[3]string]float64{
		{"GET", "/items/{id}", "200"}:  2,
		{"POST", "/items/{id}", "201"}: 1,
		{"GET", "unmatched", "404"}:    1,
		{"POST", "/boom", "500"}:       1,
		{"other", "unmatched", "405"}:  1,
		{"DELETE", "unmatched", "405"}: 1,
	}
	if n := testutil.CollectAndCount(m.requests); n != len(want) {
		t.Errorf("%d request series, want %d", n, len(want))
	}
	for labels, n := range want {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(labels[:]...)); got != n {
			t.Errorf("catsrv_http_requests_total%v = %v, want %v", labels, got, n)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var histograms int
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if strings.Contains(l.GetValue(), "secret") || strings.ContainsAny(l.GetValue(), "123456") && l.GetName() == "route" {
					t.Errorf("%s has the raw URL in label %s=%q", f.GetName(), l.GetName(), l.GetValue())
				}
			}
			if h := metric.GetHistogram(); h != nil {
				histograms++
				var labels []string
				for _, l := range metric.GetLabel() {
					labels = append(labels, l.GetValue())
				}
				if wantN := want[[3]string{labels[0], labels[1], labels[2]}]; float64(h.GetSampleCount()) != wantN {
					t.Errorf("duration histogram %v counted %d requests, want %v", labels, h.GetSampleCount(), wantN)
				}
			}
		}
	}
	if histograms != len(want) {
		t.Errorf("%d duration series, want %d", histograms, len(want))
	}
}

// TestMeasureNil: without metrics the handler is the one given.
func TestMeasureNil(t *testing.T) {
	called := false
	h := Measure(nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if !called {
		t.Fatal("the handler was not called")
	}
}

// BenchmarkMeasure is the cost Measure (and Trace) add to a request: the
// mux and handler alone, with the metrics, with metrics and a recorded
// span (no exporter).
func BenchmarkMeasure(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	m, err := NewRequestMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"measured", Measure(m, mux)},
		{"measured+traced", Measure(m, Trace(&Tracer{Tracer: sdktrace.NewTracerProvider().Tracer("bench"), Propagator: propagation.TraceContext{}}, mux))},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/items/7", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(w, req)
			}
		})
	}
}
