package authapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/failcheck"
)

// TestUnavailableIn503WithRetryAfter: the auth and memory tables answer a
// failure expected to pass with 503, Retry-After and the plain message,
// and a dependency that is not configured with 503 alone.
func TestUnavailableIn503WithRetryAfter(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	a := &authAPI{log: log}
	failcheck.CheckUnavailable(t, map[string]failcheck.Answer{
		"auth": func(err error) (int, http.Header, string) {
			w := httptest.NewRecorder()
			a.fail(w, httptest.NewRequest(http.MethodGet, "/", nil), err)
			return w.Code, w.Header(), w.Body.String()
		},
		"auth handler": failcheck.StatusErrorAnswer(t, func(err error) error { return a.authError(ctx, err) }),
		"memory":       failcheck.StatusErrorAnswer(t, func(err error) error { return a.memoryError(ctx, err) }),
	})
}
