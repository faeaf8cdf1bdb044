package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/catsrv/catsrv/core/errs"
)

// Database failures are told apart here, once for every SQL adapter: a
// lost connection, a transaction the server rolled back and SQLite's write
// lock held elsewhere are errs.KindUnavailable (503, try again), anything
// else internal. WriteTx retries with a jittered back-off; a read that
// fails answers 503 and the client tries again.

// failure is the class of a database error.
type failure int

const (
	// failOther is any error not below: not retried, internal.
	failOther failure = iota
	// failConnection: the connection was lost, reset or refused, or the
	// server ended the session (SQLSTATE class 08, 57P01-57P03). Outside
	// a commit, the statement's transaction did not commit.
	failConnection
	// failSerialization: the server rolled the transaction back
	// (40001 serialization failure, 40P01 deadlock).
	failSerialization
	// failBusy: the write lock (SQLite's, or PostgreSQL's append lock)
	// stayed with another writer longer than the wait allowed.
	failBusy
)

// classify tells what kind of failure err is.
func classify(err error) failure {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return failOther
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return failConnection
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40001", pgErr.Code == "40P01":
			return failSerialization
		case strings.HasPrefix(pgErr.Code, "08"),
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03",
			pgErr.Code == "53300": // too many connections
			return failConnection
		case pgErr.Code == "55P03": // lock_timeout: an import holds a row lock
			return failBusy
		}
		return failOther
	}
	var netErr net.Error
	switch {
	case pgconn.SafeToRetry(err),
		errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.As(err, &netErr):
		return failConnection
	case sqliteBusy(err):
		return failBusy
	}
	// pgx reports a connection it closed after a failure by this text.
	if strings.Contains(err.Error(), "conn closed") {
		return failConnection
	}
	return failOther
}

// retryable reports whether trying again may succeed and cannot repeat a
// committed write: a lost connection or a rolled-back transaction.
func retryable(err error) bool {
	f := classify(err)
	return f == failConnection || f == failSerialization
}

// UnavailableMessage is what a client is told of a database that failed
// in a way worth retrying.
const UnavailableMessage = "the database is temporarily unavailable, try again shortly"

// busyMessage is what a client is told when SQLite's write lock is held.
const busyMessage = "the database is busy with another write (an import?), try again shortly"

// unavailable returns err as a temporary errs.KindUnavailable error.
func unavailable(err error, message string) error {
	return errs.Wrap(errs.KindUnavailable, errs.Temporary(err), message)
}

// Failed turns a database error into the error an adapter returns: a
// lost connection, a rolled-back transaction or a busy SQLite database
// is a temporary errs.KindUnavailable error (the client is told to try
// again), anything else errs.KindInternal with message. Errors that
// already carry a kind other than internal are returned as they are.
func Failed(err error, message string) error {
	if err == nil {
		return nil
	}
	if e := (*errs.Error)(nil); errors.As(err, &e) && e.Kind != errs.KindInternal {
		return err
	}
	if u := transient(err); u != nil {
		return u
	}
	return errs.Wrap(errs.KindInternal, err, message)
}

// transient returns the temporary errs.KindUnavailable error of a lost
// connection, a rolled-back transaction or a busy SQLite database, and nil
// for any other failure.
func transient(err error) error {
	switch classify(err) {
	case failConnection, failSerialization:
		return unavailable(err, UnavailableMessage)
	case failBusy:
		return unavailable(err, busyMessage)
	}
	return nil
}

// retryAttempts bounds the attempts of one read or one transaction.
const retryAttempts = 4

// retryBase is the back-off before the second attempt; it doubles for
// each further one (with jitter).
const retryBase = 20 * time.Millisecond

// backoff is the jittered wait before attempt n+1 (n >= 1): uniformly
// between half and all of retryBase·2^(n-1).
func backoff(n int) time.Duration {
	d := retryBase << (n - 1)
	return d/2 + rand.N(d/2+1) //nolint:gosec // jitter, not a secret
}

// sleep waits d or until ctx is done, and reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// giveUp makes sure a database failure worth retrying reaches the caller
// as errs.KindUnavailable, whatever the code on its way wrapped it in.
func giveUp(err error) error {
	if errs.KindOf(err) != errs.KindInternal {
		return err
	}
	if u := transient(err); u != nil {
		return u
	}
	return err
}
