package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// StartingMessage is what /readyz and every other route say while the
// instance starts (Gate before Open).
const StartingMessage = "the service is starting, try again shortly"

// Gate is the server's handler from the moment the listener opens: until
// Open it answers as a starting instance (the column index being read
// from the database), then it hands every request to the full app. So a
// probe or a client meets an answer, not a refused connection, during
// the build:
//   - GET /healthz: 200 {"status":"ok"} (the process is alive);
//   - GET /readyz: 503 {"status":"unavailable","message":...};
//   - anything else: 503 with Retry-After and the ErrorBody shape (error
//     ANALYTICS-ERR-0-WAREHOUSE on the analytics routes, UNAVAILABLE
//     elsewhere).
//
// Safe for concurrent use.
type Gate struct {
	app atomic.Pointer[http.Handler]
}

// Open makes the gate hand every later request to h.
func (g *Gate) Open(h http.Handler) { g.app.Store(&h) }

// Opened reports whether Open was called.
func (g *Gate) Opened() bool { return g.app.Load() != nil }

func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := g.app.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case get && r.URL.Path == "/healthz":
		writeStarting(w, http.StatusOK, base.HealthStatus{Status: "ok"})
	case get && r.URL.Path == "/readyz":
		writeStarting(w, http.StatusServiceUnavailable, base.ReadyStatus{Status: "unavailable", Message: StartingMessage})
	default:
		code := "UNAVAILABLE"
		if r.URL.Path == analyticsapi.Prefix || strings.HasPrefix(r.URL.Path, analyticsapi.Prefix+"/") {
			code = base.AnalyticsErrorCode
		}
		w.Header().Set("Retry-After", strconv.Itoa(base.RetryAfterSeconds))
		writeStarting(w, http.StatusServiceUnavailable, base.ErrorBody{Code: code, Status: http.StatusServiceUnavailable, Message: StartingMessage})
	}
}

func writeStarting(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
