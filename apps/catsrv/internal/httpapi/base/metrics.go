package base

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RequestMetrics are the HTTP metrics of the app: requests counted and
// timed by method, route and status (ClientFaultStatus for the spec's 500
// answering a caller's mistake). The route is the pattern the mux
// matched (the huma operation's path template, such as
// /api/v1/cat/conversations/{id}), or "unmatched": never the
// raw URL, so the label takes a bounded set of values whatever clients
// send.
type RequestMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// requestLabels are the labels of both request metrics.
var requestLabels = []string{"method", "route", "status"}

// NewRequestMetrics creates the request metrics and registers them on reg.
func NewRequestMetrics(reg prometheus.Registerer) (*RequestMetrics, error) {
	m := &RequestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catsrv_http_requests_total",
			Help: "HTTP requests answered, by method, route template and status.",
		}, requestLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "catsrv_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its handler's return (a streamed reply's end), by method, route template and status.",
			Buckets: prometheus.DefBuckets,
		}, requestLabels),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Measure counts and times each request in m; nil m measures nothing. It
// goes inside Observe and outside the mux, which records the pattern it
// matched on the request Measure passes on. A handler that panics counts
// as the 500 that Observe answers, unless it had written its status.
func Measure(m *RequestMetrics, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		returned := false
		defer func() {
			status := rec.status()
			if !returned && !rec.wroteHeader {
				status = http.StatusInternalServerError
			}
			method, pattern, code := routeMethod(r), route(r), statusLabel(r, status)
			m.requests.WithLabelValues(method, pattern, code).Inc()
			m.duration.WithLabelValues(method, pattern, code).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(rec, r)
		returned = true
	})
}

// ClientFaultStatus is the status label of a 5xx the spec prescribes for a
// caller's mistake (an analytics request naming an unknown CAT or a bad
// date): the wire says 500, the metrics do not count it as a server
// error, so that an alert on status=~"5.." pages on server faults only.
const ClientFaultStatus = "500_client"

// statusLabel is the status label of a request's answer.
func statusLabel(r *http.Request, status int) string {
	if status >= http.StatusInternalServerError && isClientFault(r) {
		return ClientFaultStatus
	}
	return strconv.Itoa(status)
}

// routeMethod is the method of the matched pattern, else the request's
// when it is a standard one, else "other": a bounded label.
func routeMethod(r *http.Request) string {
	if method, _, ok := strings.Cut(r.Pattern, " "); ok {
		return method
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return r.Method
	}
	return "other"
}
