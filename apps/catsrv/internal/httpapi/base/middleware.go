package base

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
)

// Observe wraps the whole handler: it turns a panic into a generic 500 and
// logs one structured line per request. The line names the route pattern,
// never the raw URL, so that query strings (which may name users' data),
// headers and tokens stay out of the logs.
func Observe(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		note := &requestNote{}
		r = r.WithContext(context.WithValue(r.Context(), requestNoteKey{}, note))
		defer func() {
			v := recover()
			if v != nil && !isAbort(v) {
				log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
					slog.String("route", route(r)), slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if !rec.wroteHeader {
					writeInternalError(rec, r)
				}
			}
			level := slog.LevelInfo
			switch {
			case rec.status() >= http.StatusInternalServerError && note.clientFault.Load():
				level = slog.LevelWarn
			case rec.status() >= http.StatusInternalServerError:
				level = slog.LevelError
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("method", r.Method),
				slog.String("route", route(r)),
				slog.Int("status", rec.status()),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
			if v != nil && isAbort(v) {
				// The server's way to abort a response silently: let it.
				panic(v)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// requestNote is what a handler tells Observe about its response.
type requestNote struct {
	// clientFault marks a 5xx that is the caller's mistake: spec §7
	// answers an unknown CAT and a malformed date with 500. Its request
	// line is a warning, so that an ERROR line always means that something
	// broke on the server.
	clientFault atomic.Bool
}

type requestNoteKey struct{}

// markClientFault records that the request's 5xx answer is the caller's
// mistake; without Observe around the handler it does nothing.
func markClientFault(ctx context.Context) {
	if n, ok := ctx.Value(requestNoteKey{}).(*requestNote); ok {
		n.clientFault.Store(true)
	}
}

// isClientFault reports whether the request's 5xx answer was marked the
// caller's mistake (markClientFault): the request metrics label it
// 500_client and its span is no error span.
func isClientFault(r *http.Request) bool {
	n, ok := r.Context().Value(requestNoteKey{}).(*requestNote)
	return ok && n.clientFault.Load()
}

// isAbort reports whether a panic value is http.ErrAbortHandler.
func isAbort(v any) bool {
	err, ok := v.(error)
	return ok && errors.Is(err, http.ErrAbortHandler)
}

// route returns the pattern the mux matched, without its method, or
// "unmatched". The mux records the pattern on the request it was given.
func route(r *http.Request) string {
	p := r.Pattern
	if p == "" {
		return "unmatched"
	}
	if _, path, ok := strings.Cut(p, " "); ok {
		return path
	}
	return p
}

// writeInternalError answers a request whose handler panicked, with the
// error code an analytics client expects of any internal failure.
func writeInternalError(w http.ResponseWriter, r *http.Request) {
	code := statusCode(http.StatusInternalServerError)
	if strings.HasPrefix(r.URL.Path, AnalyticsPrefix+"/") {
		code = AnalyticsErrorCode
	}
	body, err := json.Marshal(ErrorBody{Code: code, Status: http.StatusInternalServerError, Message: internalMessage})
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(append(body, '\n'))
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

// WriteHeader records the status.
func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (r *recorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// status is the status sent, 200 if the handler wrote nothing.
func (r *recorder) status() int {
	if !r.wroteHeader {
		return http.StatusOK
	}
	return r.code
}
