package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// turnWait bounds how long WriteTx waits for a lock (SQLite's write lock,
// a PostgreSQL row lock), such as one a long import holds; past it the
// write fails with a temporary errs.KindUnavailable error (503).
const turnWait = 2 * time.Second

// outcomeChecks and outcomePause bound how long WriteTx asks PostgreSQL
// about a transaction still "in progress" after its commit was lost.
const (
	outcomeChecks = 20
	outcomePause  = 50 * time.Millisecond
)

// WriteTx runs fn in one write transaction and commits it when fn returns
// nil, so sibling adapters write their rows and interactions (AppendTx)
// all or nothing. On SQLite it takes the writer turn, as Append does; on
// PostgreSQL writers run concurrently (feedorder.go). It waits at most
// turnWait for a lock.
//
// On PostgreSQL a transaction lost with its connection or rolled back by
// the server (serialization failure, deadlock) runs again, a few times, so
// fn must act only through tx. A commit whose answer was lost is retried
// only once the server says it did not commit (txid_status); when that
// cannot be known the error is errs.KindUnavailable.
func (s *Store) WriteTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.dialect == sqliteDialect {
		return s.writeTxSQLite(ctx, fn)
	}
	for n := 1; ; n++ {
		a := &attempt{held: s.newHeld()} // each attempt gathers its own rows
		err := s.writeTxOnce(withAttempt(ctx, a), s.db, fn)
		if err == nil {
			s.settled(a)
			return nil
		}
		if n == retryAttempts || !retryable(err) || ctx.Err() != nil || !sleep(ctx, backoff(n)) {
			return giveUp(err)
		}
	}
}

// writeTxSQLite is WriteTx on SQLite: one attempt, with the wait for the
// write lock bounded by turnWait.
func (s *Store) writeTxSQLite(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	deadline := time.Now().Add(turnWait)
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	err := s.takeTurn(waitCtx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unavailable(err, busyMessage)
	}
	defer s.endTurn()
	a := &attempt{held: s.newHeld()}
	ctx = withAttempt(ctx, a)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return internal(err)
	}
	defer conn.Close()
	// The connection's busy wait, for the rest of turnWait, is put back
	// afterwards; a connection where that fails is discarded.
	wait := max(time.Until(deadline), 10*time.Millisecond)
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(wait.Milliseconds(), 10)); err != nil {
		return internal(err)
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = "+strconv.Itoa(sqliteBusyTimeoutMS)); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := s.writeTxOnce(ctx, conn, fn); err != nil {
		return err
	}
	s.settled(a)
	return nil
}

// takeTurn waits for this process's SQLite writer turn, or for ctx.
func (s *Store) takeTurn(ctx context.Context) error {
	select {
	case s.writeTurn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// endTurn hands the writer turn on.
func (s *Store) endTurn() { <-s.writeTurn }

// writeTxOnce is one attempt of WriteTx on db (the pool, or one
// connection of it).
func (s *Store) writeTxOnce(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	var opts *sql.TxOptions
	if s.dialect == postgresDialect {
		// Whatever the server's default: beginWrite must take the lock
		// before the transaction's snapshot, and catsrv_chat_turn reads a
		// conversation's last message after it holds its lock, both with
		// a snapshot of their own (feedorder.go, chatsql).
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return internal(err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	var xid int64
	if s.dialect == postgresDialect {
		// In one statement (beginWrite): a wait for a row lock bounded
		// by turnWait, the
		// table lock before the transaction has an id (feedorder.go), and
		// that id, to ask about should the commit be lost.
		var collections int64 // unused
		if err := tx.Tx.QueryRowContext(ctx, beginWrite, turnWait.Milliseconds()).Scan(&xid, &collections); err != nil {
			return internal(err)
		}
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	commit := bun.Tx.Commit
	if h := s.hooks; h != nil {
		if h.beforeCommit != nil {
			if err := h.beforeCommit(ctx, tx); err != nil {
				return err
			}
		}
		if h.commit != nil {
			commit = h.commit
		}
	}
	done = true
	if err := commit(tx); err != nil {
		if s.dialect == postgresDialect && classify(err) == failConnection {
			return s.commitOutcome(ctx, xid, err)
		}
		return internal(err)
	}
	return nil
}

// commitOutcome settles a commit whose answer was lost with its
// connection: it asks the server, on another connection, what became of
// transaction xid. Committed is success; aborted is commitErr (worth
// retrying: nothing was stored); anything else, a server that cannot be
// asked included, is an errs.KindUnavailable error not worth retrying,
// because the transaction may have committed.
func (s *Store) commitOutcome(ctx context.Context, xid int64, commitErr error) error {
	var status sql.NullString
	for range outcomeChecks {
		if err := s.db.DB.QueryRowContext(ctx, "SELECT txid_status($1)", xid).Scan(&status); err != nil {
			status.String = "unknown (" + err.Error() + ")"
			if retryable(err) && sleep(ctx, outcomePause) {
				continue // the server may be coming back
			}
			break
		}
		if status.String == "committed" {
			return nil
		}
		if status.String == "aborted" {
			return internal(commitErr)
		}
		if !status.Valid || !sleep(ctx, outcomePause) {
			break
		}
	}
	// The text only, not the error: this one must not look like a lost
	// connection, which would be retried.
	cause := fmt.Errorf("commit of transaction %d lost (%s); its status: %s", xid, commitErr.Error(), status.String)
	return errs.Wrap(errs.KindUnavailable, errs.Temporary(cause),
		"the database connection was lost while saving; the change may not have been stored, check before trying again")
}

// AppendTx validates and stores interactions in tx, a transaction of
// WriteTx: the same rows Append writes. An
// invalid interaction is an errs.KindInvalid error naming its position
// (1-based); the caller's transaction then rolls back.
func (s *Store) AppendTx(ctx context.Context, tx bun.Tx, interactions []analytics.Interaction) error {
	normalized := make([]analytics.Interaction, 0, len(interactions))
	for n, i := range interactions {
		if err := i.Validate(); err != nil {
			return errs.New(errs.KindInvalid, "interaction %d: %s", n+1, errs.PublicMessage(err, "invalid"))
		}
		normalized = append(normalized, i.Normalize())
	}
	w := newWriter(ctx, tx.Tx, s.dialect)
	a := attemptFrom(ctx)
	if a != nil {
		w.held, w.store = a.held, s
	}
	defer w.close()
	if err := w.writeAll(normalized); err != nil {
		return err
	}
	if a != nil {
		a.collections, a.learned = w.collections, append(a.learned, w.learned...)
	}
	return nil
}
