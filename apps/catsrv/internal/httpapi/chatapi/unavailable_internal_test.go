package chatapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/failcheck"
)

// TestUnavailableIn503WithRetryAfter: the chat table, as a huma error and
// as a stream's error, answers a failure expected to pass with 503,
// Retry-After and the plain message, and a dependency that is not
// configured with 503 alone.
func TestUnavailableIn503WithRetryAfter(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	failcheck.CheckUnavailable(t, map[string]failcheck.Answer{
		"chat": failcheck.StatusErrorAnswer(t, func(err error) error { return chatError(ctx, log, err) }),
		"chat stream": func(err error) (int, http.Header, string) {
			w := httptest.NewRecorder()
			(&chatAPI{log: log}).writeError(ctx, w, err)
			return w.Code, w.Header(), w.Body.String()
		},
	})
}
