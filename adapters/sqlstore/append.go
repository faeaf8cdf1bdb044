package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"iter"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// The page cache of the SQLite connection an Append writes on (it keeps
// it for its life): bulkWriterCache, 32 MiB, for a store opened with
// BulkWrites (catsrv import), writerCache, 8 MiB, otherwise (serve). For
// an import, 64 MiB gained nothing: a 10M-line import took 180 s with it
// and 171 s with 32 MiB, and peaked at 287 MiB against 222 MiB
// (docs/benchmarks.md, section 22); 8 MiB imported 3M lines 6% slower. A
// server's Appends are chat turns and ingested batches: at 10M rows 8 MiB
// ingested over HTTP as fast as 32 (61,393 and 52,709 interactions/s),
// and kept the server's peak 39 MiB lower (section 27).
const (
	writerCache     = "PRAGMA cache_size = -8192"
	bulkWriterCache = "PRAGMA cache_size = -32768"
)

// writerTemp keeps the SQLite writer connection's statement journals in
// memory: a multi-row insert or upsert inside a transaction journals the
// pages it changes so that it can be undone alone, and past 64 KiB SQLite
// spills that journal to a temporary file, written (and read back) in
// every batch.
const writerTemp = "PRAGMA temp_store = MEMORY"

// Append validates and stores the interactions the sequence yields, and
// updates the rollups, in one transaction: all or nothing. It reads the
// sequence as a stream, so inputs of any length are held in memory only a
// few batches at a time. An invalid interaction is an errs.KindInvalid
// error naming its position (1-based); an error from the sequence or the
// context is returned as is. Every event kind is stored; only api rows are
// rolled up.
//
// Reading (which for an import includes decoding), validating and
// normalizing run on the caller's goroutine while another writes the
// previous batches, so the two overlap. On PostgreSQL an input longer
// than copyBatchRows (an import) streams through COPY (pipeline.go); a
// shorter one (an HTTP batch) is written on the transaction in multi-row
// inserts (writer.run).
func (s *Store) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	h := s.newHeld()
	n, err := s.append(ctx, interactions, h, false)
	if err == nil && s.dialect == postgresDialect {
		s.told(h) // SQLite tells within its writer turn (append)
	}
	return n, err
}

// append is Append, gathering the rows written in h when it is not nil;
// with load, Load (load.go).
func (s *Store) append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error], h *held, load bool) (int, error) {
	alone := false
	if s.dialect == sqliteDialect {
		if err := s.takeTurn(ctx); err != nil {
			return 0, err
		}
		defer s.endTurn()
		if load && s.leaveWAL(ctx) {
			alone = true
			// After the transaction has ended (deferred below).
			defer s.backToWAL(ctx)
		}
	}
	// A connection of its own: on PostgreSQL the writer also speaks COPY
	// on it, inside the transaction (see copyRaw); on a SQLite file, the
	// store's writer connection (writerConn).
	conn, release, err := s.appendConn(ctx)
	if err != nil {
		return 0, internal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		release(err)
		return 0, internal(err)
	}
	committed := false
	// txErr is what ended the transaction, if anything did but a
	// rollback of ours (release discards the connection then): a failed
	// commit or rollback, or a cancelled ctx, on which database/sql rolls
	// back, and may close the connection, itself.
	var txErr error
	defer func() {
		if !committed {
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				txErr = err
			}
			if txErr == nil {
				txErr = ctx.Err()
			}
		}
		release(txErr)
	}()
	// PostgreSQL writers take no common lock and commit concurrently
	// (feedorder.go). They do not wait for each other's commits on rollup
	// rows (shards) or code blocks (only ever inserted, blockcompact.go),
	// and the rows two may both lock (dictionary entries, rollup shards)
	// are written in one order, sorted (rollupwrite.go).
	if s.dialect == postgresDialect {
		if _, err := tx.ExecContext(ctx, writeLockFirst); err != nil {
			return 0, internal(err)
		}
	}

	// The first failure on either side cancels pipeCtx with its error as
	// the cause, which stops the other side.
	pipeCtx, cancel := context.WithCancelCause(ctx)
	w := newWriter(pipeCtx, tx, s.dialect)
	w.compactAlways = s.compactAlways
	w.store = s
	w.codeCache = &s.codes
	w.held = h
	w.alone = alone
	if s.dialect == postgresDialect {
		// An import goes through the COPY pipeline, with a second
		// connection for the dictionaries (pipeline.go); an input of one
		// batch (an HTTP batch) is written on the transaction (run).
		w.conn = conn
		w.openDict = func() (*sql.Conn, error) { return s.db.DB.Conn(ctx) }
		w.rawBatch = copyBatchRows
	}
	written := make(chan struct{})
	var writeErr error
	go func() {
		defer close(written)
		if writeErr = w.run(); writeErr != nil {
			cancel(writeErr)
		}
	}()
	// Runs before the rollback, also if the sequence panics: the writer
	// must be done with the transaction first.
	defer func() {
		cancel(nil)
		<-written
		w.close()
	}()

	n, readErr := w.feed(pipeCtx, interactions)
	if readErr != nil {
		cancel(readErr)
	}
	<-written
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case readErr != nil && writeErr != nil:
		// One side failed and stopped the other: report the first cause.
		return 0, context.Cause(pipeCtx)
	case readErr != nil:
		return 0, readErr
	case writeErr != nil:
		return 0, writeErr
	}
	if err := tx.Commit(); err != nil {
		txErr = err
		return 0, internal(err)
	}
	committed = true
	w.codeCache.learn(w.collections, w.learned)
	if s.dialect == sqliteDialect {
		s.told(h) // in commit order (tell.go)
	}
	return n - w.skipped - w.copySkipped, nil
}

// appendConn returns the connection an Append writes on and the function
// that gives it back once the transaction has ended, told the error that
// ended it if any. On a SQLite file that is the store's writer connection,
// kept across Appends (writerConn); otherwise one from the pool.
func (s *Store) appendConn(ctx context.Context) (*sql.Conn, func(error), error) {
	if s.dialect == sqliteDialect && s.reserveWriter {
		conn, err := s.writerConn(ctx)
		if err != nil {
			return nil, nil, err
		}
		return conn, s.keepWriter, nil
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if s.dialect == sqliteDialect {
		// The rollup upserts of a large import need a large page cache.
		if _, err := conn.ExecContext(ctx, s.writerCache); err != nil {
			_ = conn.Close()
			return nil, nil, err
		}
	}
	return conn, func(error) { _ = conn.Close() }, nil
}

// feed reads, validates and normalizes the interactions into batches for
// the writer, and closes the batch channel when it returns. It stops at
// the first error, or when ctx is done.
func (w *writer) feed(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	defer close(w.batches)
	n := 0
	batch := w.emptyBatch()
	send := func() error {
		select {
		case w.batches <- batch:
			batch = w.emptyBatch()
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for i, err := range interactions {
		if err != nil {
			return 0, err
		}
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		if err := i.Validate(); err != nil {
			return 0, errs.New(errs.KindInvalid, "interaction %d: %s", n+1, errs.PublicMessage(err, "invalid"))
		}
		batch = append(batch, i.Normalize())
		n++
		if len(batch) == w.rawBatch {
			if err := send(); err != nil {
				return 0, err
			}
		}
	}
	if len(batch) > 0 {
		if err := send(); err != nil {
			return 0, err
		}
	}
	return n, nil
}
