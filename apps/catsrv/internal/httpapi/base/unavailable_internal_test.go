package base

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/core/errs"
)

// TestUnavailableIn503WithRetryAfter: a failure expected to pass (a lost
// database, errs.ErrTemporary) is 503 with Retry-After and its plain
// message in every error table (here the analytics table); a dependency that is not configured
// is 503 without Retry-After.
func TestUnavailableIn503WithRetryAfter(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	temporary := errs.Wrap(errs.KindUnavailable, errs.Temporary(errors.New("FATAL: terminating connection (SQLSTATE 57P01)")),
		"the database is temporarily unavailable, try again shortly")
	notConfigured := errs.New(errs.KindUnavailable, "chat is not configured on this server")

	answers := map[string]func(error) (int, http.Header, string){
		"analytics": func(err error) (int, http.Header, string) {
			var e *apiError
			if !errors.As(AnalyticsError(ctx, log, err), &e) {
				t.Fatal("AnalyticsError did not return an apiError")
			}
			return e.Status, e.GetHeaders(), e.Message
		},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			status, h, msg := answer(temporary)
			if status != http.StatusServiceUnavailable || h.Get("Retry-After") != strconv.Itoa(RetryAfterSeconds) {
				t.Errorf("temporary failure: %d, Retry-After %q; want 503 and %d", status, h.Get("Retry-After"), RetryAfterSeconds)
			}
			if !strings.Contains(msg, "temporarily unavailable") || strings.Contains(msg, "SQLSTATE") {
				t.Errorf("temporary failure message %q: want the plain message only", msg)
			}
			status, h, _ = answer(notConfigured)
			if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "" {
				t.Errorf("not configured: %d, Retry-After %q; want 503 without", status, h.Get("Retry-After"))
			}
		})
	}
}
