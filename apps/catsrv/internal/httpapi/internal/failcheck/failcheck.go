// Package failcheck checks how the HTTP app's error tables answer a failure
// of a dependency. Only tests import it; it imports no route package, so
// their internal tests can.
package failcheck

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/errs"
)

// Answer is how one error table answers err: status, headers and body or
// message.
type Answer func(err error) (status int, h http.Header, msg string)

// StatusError is what huma writes as an error with a status and headers.
type StatusError interface {
	error
	GetStatus() int
	GetHeaders() http.Header
}

// CheckUnavailable checks that every answer gives a failure expected to
// pass (a lost database, errs.Temporary) 503 with Retry-After and its
// plain message only, and a dependency that is not configured 503 without
// Retry-After.
func CheckUnavailable(t *testing.T, answers map[string]Answer) {
	t.Helper()
	temporary := errs.Wrap(errs.KindUnavailable, errs.Temporary(errors.New("FATAL: terminating connection (SQLSTATE 57P01)")),
		"the database is temporarily unavailable, try again shortly")
	notConfigured := errs.New(errs.KindUnavailable, "chat is not configured on this server")
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			status, h, msg := answer(temporary)
			if status != http.StatusServiceUnavailable || h.Get("Retry-After") != strconv.Itoa(base.RetryAfterSeconds) {
				t.Errorf("temporary failure: %d, Retry-After %q; want 503 and %d", status, h.Get("Retry-After"), base.RetryAfterSeconds)
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

// StatusErrorAnswer is the answer of a function returning a StatusError.
func StatusErrorAnswer(t *testing.T, f func(error) error) Answer {
	return func(err error) (int, http.Header, string) {
		var e StatusError
		if !errors.As(f(err), &e) {
			t.Fatalf("%v is not a huma status error", f(err))
		}
		return e.GetStatus(), e.GetHeaders(), e.Error()
	}
}
