package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// oneTurn is the write of the tests below: one api interaction, through
// AppendTx, counting how often WriteTx ran it.
func oneTurn(s *sqlstore.Store, runs *atomic.Int32) func(ctx context.Context, tx bun.Tx) error {
	in := sampleLog(1, 0)[0]
	return func(ctx context.Context, tx bun.Tx) error {
		runs.Add(1)
		return s.AppendTx(ctx, tx, []analytics.Interaction{in})
	}
}

// stored counts the interactions in the raw log and the rollups.
func stored(t *testing.T, s *sqlstore.Store) (raw, rolled int64) {
	t.Helper()
	sel := analytics.Selection{Cat: "alpha", Range: analytics.Range{Start: day0, End: day0.Add(72 * time.Hour)}}
	raw, err := totalOf(t.Context(), s, sel)
	if err != nil {
		t.Fatal(err)
	}
	if rolled, err = totalOf(t.Context(), s.Rollups(), sel); err != nil {
		t.Fatal(err)
	}
	return raw, rolled
}

// TestWriteTxRetriesWhenItsBackendIsKilled: the server ends the
// transaction's session just before the commit (pg_terminate_backend, as
// an operator or a failover would); WriteTx finds the transaction
// aborted, runs it again on a fresh connection, and it is stored once.
func TestWriteTxRetriesWhenItsBackendIsKilled(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	var runs atomic.Int32
	sqlstore.SetWriteTxHooks(s, func(ctx context.Context, tx bun.Tx) error {
		if runs.Load() > 1 {
			return nil
		}
		var pid int
		if err := tx.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		// Another connection of the pool ends this one's session.
		_, err := s.DB().DB.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid)
		return err
	}, nil)
	if err := s.WriteTx(t.Context(), oneTurn(s, &runs)); err != nil {
		t.Fatalf("WriteTx after a killed backend: %v", err)
	}
	if runs.Load() != 2 {
		t.Errorf("the transaction ran %d times, want 2 (killed, then retried)", runs.Load())
	}
	if raw, rolled := stored(t, s); raw != 1 || rolled != 1 {
		t.Errorf("stored %d raw rows and %d in the rollups, want 1 and 1", raw, rolled)
	}
}

// TestWriteTxLostCommitAnswerIsNotStoredTwice: the commit reaches the
// server and commits, but its answer is lost with the connection. WriteTx
// must not run the transaction again: it asks the server, learns that it
// committed, and reports success with the row stored once.
func TestWriteTxLostCommitAnswerIsNotStoredTwice(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	var runs, commits atomic.Int32
	sqlstore.SetWriteTxHooks(s, nil, func(tx bun.Tx) error {
		if err := tx.Commit(); err != nil {
			return err
		}
		if commits.Add(1) == 1 {
			return io.ErrUnexpectedEOF // the connection dropped before the answer came
		}
		return nil
	})
	if err := s.WriteTx(t.Context(), oneTurn(s, &runs)); err != nil {
		t.Fatalf("WriteTx whose commit answer was lost: %v", err)
	}
	if raw, rolled := stored(t, s); raw != 1 || rolled != 1 {
		t.Errorf("stored %d raw rows and %d in the rollups, want 1 and 1 (the transaction ran %d times)", raw, rolled, runs.Load())
	}
	if runs.Load() != 1 {
		t.Errorf("the transaction ran %d times, want 1", runs.Load())
	}
}

// TestWriteTxLostCommitUnknownIsUnavailable: a commit that was never
// sent is lost too, but the server then says the transaction aborted, so
// it is retried; when the server cannot be asked at all (here: the
// commit and the check both fail because the database was dropped of its
// connections and refuses new ones) the outcome is unknown, and WriteTx
// answers a temporary errs.KindUnavailable without trying again.
func TestWriteTxLostCommitUnknownIsUnavailable(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	var runs atomic.Int32
	sqlstore.SetWriteTxHooks(s, nil, func(tx bun.Tx) error {
		_ = tx.Rollback()
		// The answer lost, and the pool closed under the check that
		// follows: its status cannot be asked.
		_ = s.DB().DB.Close()
		return io.ErrUnexpectedEOF
	})
	err := s.WriteTx(t.Context(), oneTurn(s, &runs))
	if errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) {
		t.Fatalf("WriteTx with an unknown outcome = %v (kind %v), want a temporary unavailable error", err, errs.KindOf(err))
	}
	if runs.Load() != 1 {
		t.Errorf("the transaction ran %d times, want 1: an unknown outcome is never retried", runs.Load())
	}
}

// TestWriteTxRefusesWhileSQLiteIsLocked: another process holds SQLite's
// write lock (as catsrv import does for the whole import). WriteTx, and
// the writers queued behind it in this process, give up within turnWait
// with a temporary errs.KindUnavailable error and store nothing; once the
// lock is released the same write succeeds.
func TestWriteTxRefusesWhileSQLiteIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catsrv.db")
	s := openStore(t, "sqlite:"+path)
	other, err := sql.Open(sqliteshim.ShimName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	lock, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	var runs atomic.Int32
	const writers = 3
	errc := make(chan error, writers)
	start := time.Now()
	for range writers {
		go func() { errc <- s.WriteTx(t.Context(), oneTurn(s, &runs)) }()
	}
	for range writers {
		err := <-errc
		if errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) {
			t.Errorf("WriteTx while another process writes = %v (kind %v), want a temporary unavailable error", err, errs.KindOf(err))
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the writers waited %v for the lock, want well under 5s", took)
	}
	if raw, rolled := stored(t, s); raw != 0 || rolled != 0 {
		t.Errorf("refused writes stored %d raw rows and %d in the rollups", raw, rolled)
	}

	if _, err := lock.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	_ = lock.Close()
	if err := s.WriteTx(t.Context(), oneTurn(s, &runs)); err != nil {
		t.Fatalf("WriteTx after the lock was released: %v", err)
	}
	if raw, rolled := stored(t, s); raw != 1 || rolled != 1 {
		t.Errorf("stored %d raw rows and %d in the rollups, want 1 and 1", raw, rolled)
	}
}

// TestWriteTxRefusesWhilePostgresIsLocked: another session holds a lock
// on the interactions that conflicts with the writers' (as a collection of
// dictionary entries does while it runs). WriteTx waits at most turnWait
// for it (the lock timeout its first statement sets for the transaction
// only), then fails with a temporary errs.KindUnavailable error and
// stores nothing; the connection it used keeps no timeout.
func TestWriteTxRefusesWhilePostgresIsLocked(t *testing.T) {
	t.Parallel() // own stores only
	dsn := sqltest.PostgresDSN(t)
	s := openStore(t, dsn)
	lock, err := s.DB().DB.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Close() })
	if _, err := lock.ExecContext(t.Context(), "BEGIN; LOCK TABLE interactions IN SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var runs atomic.Int32
	err = s.WriteTx(ctx, oneTurn(s, &runs))
	if errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) || ctx.Err() != nil {
		t.Errorf("WriteTx while another session locks the interactions = %v (kind %v), want a temporary unavailable error before the context's end",
			err, errs.KindOf(err))
	}
	if runs.Load() != 0 {
		t.Errorf("fn ran %d times behind the lock, want 0", runs.Load())
	}
	if _, err := lock.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if raw, rolled := stored(t, s); raw != 0 || rolled != 0 {
		t.Errorf("the refused write stored %d raw rows and %d in the rollups", raw, rolled)
	}
	if err := s.WriteTx(t.Context(), oneTurn(s, &runs)); err != nil {
		t.Fatalf("WriteTx after the lock was released: %v", err)
	}
	// Every pooled connection, the committed turn's included, is back to
	// the server's lock timeout (the pool hands its idle connections out
	// in turn).
	for range 2 * s.DB().DB.Stats().OpenConnections {
		var timeout string
		if err := s.DB().DB.QueryRowContext(t.Context(), "SHOW lock_timeout").Scan(&timeout); err != nil {
			t.Fatal(err)
		}
		if timeout != "0" {
			t.Errorf("a pooled connection kept lock_timeout %s after the transaction", timeout)
		}
	}
}

// TestWriteTxReadCommittedWhateverTheDefault: on a database whose default
// isolation is repeatable read, WriteTx still runs its transactions at
// read committed, which its first statement (the lock before any
// snapshot) and catsrv_chat_turn (the last message read after the lock)
// rely on.
func TestWriteTxReadCommittedWhateverTheDefault(t *testing.T) {
	t.Parallel() // own stores only
	dsn := sqltest.PostgresDatabaseDSN(t, map[string]string{"default_transaction_isolation": "'repeatable read'"})
	s := openStore(t, dsn)
	var outside, inside string
	if err := s.DB().DB.QueryRowContext(t.Context(), "SHOW transaction_isolation").Scan(&outside); err != nil {
		t.Fatal(err)
	}
	if outside != "repeatable read" {
		t.Fatalf("the database's default isolation is %q, want repeatable read (the test's premise)", outside)
	}
	if err := s.WriteTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		return tx.QueryRowContext(ctx, "SHOW transaction_isolation").Scan(&inside)
	}); err != nil {
		t.Fatal(err)
	}
	if inside != "read committed" {
		t.Errorf("WriteTx ran at %q, want read committed", inside)
	}
}

// TestRolledBackTurnCachesNoCodes: a turn that adds dictionary entries and
// then fails rolls them back; their codes must not reach the code cache,
// or the next turn with the same texts would point at entries that do not
// exist.
func TestRolledBackTurnCachesNoCodes(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := analytics.Interaction{Time: day0, Cat: "alpha", EventKind: analytics.EventKindAPI,
				Topic: "rolled back topic", Model: "m", Persona: "p", Question: "rolled back question", Answer: "a"}
			failed := errors.New("the turn fails after its append")
			err := s.WriteTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
				if err := s.AppendTx(ctx, tx, []analytics.Interaction{in}); err != nil {
					return err
				}
				return failed
			})
			if !errors.Is(err, failed) {
				t.Fatalf("WriteTx = %v, want the turn's own error", err)
			}
			turn(t, s, []analytics.Interaction{in})
			expectMatchesReference(t, "after a rolled-back turn", s, normalized([]analytics.Interaction{in}))
		})
	}
}
