// Package telemetry holds catsrv's Prometheus metrics other than the HTTP
// ones (those are httpapi/base's RequestMetrics): the registry of a
// process and the handler of GET /metrics, decorators that count the chat
// model's calls and the authentication events, and the column index's lag
// as a collector. The composition root (apps/catsrv serve) builds one
// registry and hands it to each; nothing uses Prometheus's global
// registry. docs/operations.md ("Metrics") lists every metric.
package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry of its own (not Prometheus's global one)
// holding the process collector (CPU, memory, file descriptors) and the Go
// runtime collector (goroutines, GC, heap).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
	)
	return reg
}

// Handler serves the registry's metrics in the Prometheus text format (or
// the protobuf or OpenMetrics format a scraper asks for). A collector
// that fails leaves its metrics out of the answer rather than failing the
// scrape; errors are passed to onError, if given.
func Handler(reg *prometheus.Registry, onError func(error)) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            errorLogger(onError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	})
}

// errorLogger adapts onError to promhttp's logger.
type errorLogger func(error)

func (l errorLogger) Println(v ...any) {
	if l == nil {
		return
	}
	for _, x := range v {
		if err, ok := x.(error); ok {
			l(err)
		}
	}
}
