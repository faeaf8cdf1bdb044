package base_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/failcheck"
)

// TestUnavailableIn503WithRetryAfter: the analytics table answers a failure
// expected to pass with 503, Retry-After and the plain message, and a
// dependency that is not configured with 503 alone.
func TestUnavailableIn503WithRetryAfter(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	failcheck.CheckUnavailable(t, map[string]failcheck.Answer{
		"analytics": failcheck.StatusErrorAnswer(t, func(err error) error { return base.AnalyticsError(context.Background(), log, err) }),
	})
}
