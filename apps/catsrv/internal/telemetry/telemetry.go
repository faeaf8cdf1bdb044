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

	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
)

// NewRegistry returns a registry of its own (not Prometheus's global one)
// holding the process collector (CPU, memory, file descriptors), the Go
// runtime collector (goroutines, GC, heap) and catsrv_build_info.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		BuildInfo(buildinfo.Get()),
	)
	return reg
}

// BuildInfo is the gauge catsrv_build_info, always 1, whose labels name
// the running build: version, commit and goversion (buildinfo.Info).
func BuildInfo(info buildinfo.Info) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "catsrv_build_info",
		Help: "The running build: always 1, labelled by its version, commit and Go version.",
		ConstLabels: prometheus.Labels{
			"version": info.Version, "commit": info.Commit, "goversion": info.GoVersion,
		},
	}, func() float64 { return 1 })
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
