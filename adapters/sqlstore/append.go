package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"iter"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// The page cache of the SQLite connection Appends write on: 32 MiB for a
// store opened with BulkWrites (catsrv import), 8 MiB otherwise.
const (
	writerCache     = "PRAGMA cache_size = -8192"
	bulkWriterCache = "PRAGMA cache_size = -32768"
)

// writerTemp keeps the SQLite writer's statement journals in memory
// instead of temporary files.
const writerTemp = "PRAGMA temp_store = MEMORY"

// Append validates and stores the interactions the sequence yields in one
// transaction: all or nothing. It reads the
// sequence as a stream, a few batches at a time, on the caller's goroutine
// while another writes the previous batches. An invalid interaction is an
// errs.KindInvalid error naming its position (1-based); an error from the
// sequence or the context is returned as is. Every event kind is stored;
// only api rows are counted.
func (s *Store) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	if s.dialect == sqliteDialect {
		if err := s.takeTurn(ctx); err != nil {
			return 0, err
		}
		defer s.endTurn()
	}
	return s.stream(ctx, interactions, maxBatchRows, func(w *writer, _ *sql.Conn, in *batches) error {
		w.store = s // its caches (codecache.go); an import's writes go without
		return w.run(in)
	})
}

// stream runs write in a new transaction on a connection of its own while
// the caller's goroutine reads the interactions into batches of size for
// it, and commits when both succeed; then the follower is told. On SQLite
// the caller holds the writer turn.
func (s *Store) stream(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error], size int,
	write func(w *writer, conn *sql.Conn, in *batches) error,
) (int, error) {
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
	// txErr is what ended the transaction other than our rollback (a
	// failed commit or rollback, a cancelled ctx): release then discards
	// the connection.
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
	if s.dialect == postgresDialect {
		if _, err := tx.ExecContext(ctx, writeLockFirst); err != nil {
			return 0, internal(err)
		}
	}
	// The first failure on either side cancels pipeCtx with its error as
	// the cause, which stops the other side.
	pipeCtx, cancel := context.WithCancelCause(ctx)
	w := newWriter(pipeCtx, tx, s.dialect)
	w.held = s.newHeld()
	in := newBatches(size)
	written := make(chan struct{})
	var writeErr error
	go func() {
		defer close(written)
		if writeErr = write(w, conn, in); writeErr != nil {
			cancel(writeErr)
		}
	}()
	// Also if the sequence panics: the writer is done with the transaction
	// before it rolls back.
	defer func() {
		cancel(nil)
		<-written
		w.close()
	}()
	n, readErr := in.feed(pipeCtx, interactions)
	if readErr != nil {
		cancel(readErr)
	}
	<-written
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case readErr != nil && writeErr != nil:
		return 0, context.Cause(pipeCtx) // the first cause
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
	s.codes.learn(w.collections, w.learned)
	s.told(w.held)
	return n - w.skipped, nil
}

// run writes the batches until the input ends, then the pending blocks.
func (w *writer) run(in *batches) error {
	for batch := range in.c {
		if err := w.ctxErr(); err != nil {
			return err
		}
		if err := w.write(batch); err != nil {
			return err
		}
		in.recycle(batch)
	}
	if err := w.ctxErr(); err != nil {
		return err
	}
	return w.flushBlocks()
}

// appendConn returns the connection a stream writes on and the function
// that gives it back once the transaction has ended, told the error that
// ended it if any: on a SQLite file the store's writer connection
// (writerconn.go), otherwise one from the pool.
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
		if _, err := conn.ExecContext(ctx, s.writerCache); err != nil {
			_ = conn.Close()
			return nil, nil, err
		}
	}
	return conn, func(error) { _ = conn.Close() }, nil
}

// batchesQueued is how many batches may wait for the writer.
const batchesQueued = 2

// batches carries the batches the reader fills to the writer, and the
// written ones back for reuse.
type batches struct {
	c, spare chan []analytics.Interaction
	size     int
}

func newBatches(size int) *batches {
	return &batches{c: make(chan []analytics.Interaction, batchesQueued),
		spare: make(chan []analytics.Interaction, batchesQueued+1), size: size}
}

// empty returns a batch to fill, a written one when there is one.
func (b *batches) empty() []analytics.Interaction {
	select {
	case batch := <-b.spare:
		return batch[:0]
	default:
		return make([]analytics.Interaction, 0, b.size)
	}
}

// recycle hands a written batch back to the reader.
func (b *batches) recycle(batch []analytics.Interaction) {
	select {
	case b.spare <- batch:
	default:
	}
}

// feed reads, validates and normalizes the interactions into batches, and
// closes the channel when it returns. It stops at the first error, or when
// ctx is done.
func (b *batches) feed(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	defer close(b.c)
	n := 0
	batch := b.empty()
	send := func() error {
		select {
		case b.c <- batch:
			batch = b.empty()
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
		if len(batch) == b.size {
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
