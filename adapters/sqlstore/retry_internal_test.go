package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/catsrv/catsrv/core/errs"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	cases := []struct {
		name string
		err  error
		want failure
	}{
		{"session ended by an administrator", pg("57P01"), failConnection},
		{"server shutting down", pg("57P02"), failConnection},
		{"server starting", pg("57P03"), failConnection},
		{"connection failure class 08", pg("08006"), failConnection},
		{"too many connections", pg("53300"), failConnection},
		{"serialization failure", pg("40001"), failSerialization},
		{"deadlock", pg("40P01"), failSerialization},
		{"lock time-out", pg("55P03"), failBusy},
		{"unique violation", pg("23505"), failOther},
		{"syntax error", pg("42601"), failOther},
		{"end of stream", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), failConnection},
		{"bad connection", driver.ErrBadConn, failConnection},
		{"SQLite busy", errors.New("database is locked (5) (SQLITE_BUSY)"), failBusy},
		{"cancelled", fmt.Errorf("read: %w", context.Canceled), failOther},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), failOther},
		{"anything else", errors.New("no such table"), failOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classify(c.err); got != c.want {
				t.Errorf("classify(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}

func TestFailedKinds(t *testing.T) {
	lost := Failed(&pgconn.PgError{Code: "57P01", Message: "terminating connection"}, "store failed")
	if errs.KindOf(lost) != errs.KindUnavailable || !errors.Is(lost, errs.ErrTemporary) {
		t.Errorf("a lost connection is %v (kind %v), want temporary unavailable", lost, errs.KindOf(lost))
	}
	if msg := errs.PublicMessage(lost, ""); msg != UnavailableMessage {
		t.Errorf("its public message is %q, want the plain one", msg)
	}
	if other := Failed(errors.New("no such table"), "store failed"); errs.KindOf(other) != errs.KindInternal {
		t.Errorf("another failure is kind %v, want internal", errs.KindOf(other))
	}
	notFound := errs.New(errs.KindNotFound, "conversation not found")
	if got := Failed(notFound, "store failed"); !errors.Is(got, notFound) || errs.KindOf(got) != errs.KindNotFound || got.Error() != notFound.Error() {
		t.Errorf("a core error was rewrapped: %v", got)
	}
}
