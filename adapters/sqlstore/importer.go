package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sync/errgroup"

	"github.com/catsrv/catsrv/core/analytics"
)

// Load is Append for a bulk import (catsrv import): the same transaction
// and result, written faster. On PostgreSQL it streams the rows into COPY
// (copyImport). On a SQLite file no other connection has open it writes
// under a rollback journal instead of through the write-ahead log, which
// the one large transaction would grow to its size, and returns the file
// to WAL mode when the transaction ends; other uses of the file wait
// meanwhile. A killed import leaves a hot journal, rolled back by the next
// connection.
func (s *Store) Load(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	if s.dialect == postgresDialect {
		return s.stream(ctx, interactions, copyBatchRows, s.copyImport)
	}
	if err := s.takeTurn(ctx); err != nil {
		return 0, err
	}
	defer s.endTurn()
	if s.reserveWriter && s.leaveWAL(ctx) {
		defer s.backToWAL(ctx) // after the transaction has ended
	}
	return s.stream(ctx, interactions, maxBatchRows, func(w *writer, _ *sql.Conn, in *batches) error {
		return w.run(in)
	})
}

// leaveWAL switches the writer connection to a rollback journal with full
// syncs and reports whether it did, having closed this process's idle
// connections (each holding the file open in WAL mode would stop the
// switch). The caller holds the writer turn.
func (s *Store) leaveWAL(ctx context.Context) bool {
	s.db.SetMaxIdleConns(0) // closes the idle connections
	s.db.SetMaxIdleConns(sqliteIdleConns)
	conn, err := s.writerConn(ctx)
	if err != nil {
		return false
	}
	// Not waiting: another connection holding the file is no passing
	// state but an open server or import.
	mode := ""
	err = conn.QueryRowContext(ctx, "PRAGMA busy_timeout = 0").Scan(new(int))
	if err == nil {
		err = conn.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode)
	}
	if err == nil && mode == "delete" {
		_, err = conn.ExecContext(ctx, "PRAGMA synchronous = FULL")
	}
	if _, restore := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(sqliteBusyTimeoutMS)); restore != nil && err == nil {
		err = restore
	}
	if err != nil {
		// Its state is not known: the next Append opens another.
		dropConn(conn)
		s.writer = nil
		return false
	}
	return mode == "delete"
}

// backToWAL returns the file to WAL mode after a Load that left it, also
// when its transaction failed or its context was cancelled, and discards
// the writer connection, whose settings were the Load's: the next Append
// opens another. When a failed transaction has already discarded the
// writer, a new connection does it: every connection asks for WAL mode
// when it opens (openSQLite). If the switch fails (another process opened
// the file meanwhile), that process's connection has switched it. The
// caller holds the writer turn.
func (s *Store) backToWAL(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	conn := s.writer
	s.writer = nil
	if conn == nil {
		var err error
		if conn, err = s.db.DB.Conn(ctx); err != nil {
			return
		}
	}
	_, _ = conn.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	dropConn(conn)
}

// A PostgreSQL import runs on three goroutines: the reader (Load's
// caller), the coder (dictionary codes) and the copier (COPY on the
// transaction's connection), so the server inserts while the client codes.
// The coder writes dictionary entries on a connection of its own, since a
// connection in COPY runs nothing else: a failed import may leave unused
// entries, which count nothing. Interaction ids are looked up on the
// transaction between COPY segments (keepNew).

// copyBatchRows is how many rows one batch of an import carries.
const copyBatchRows = 8192

// codedBatch is a batch with what the copier needs of it.
type codedBatch struct {
	rows []analytics.Interaction
	dims [][]byte // per row, nil for rows never counted
	ids  bool     // some row has an interaction id
}

// copyImport is Load's write on PostgreSQL.
func (s *Store) copyImport(w *writer, conn *sql.Conn, in *batches) error {
	w.held.lose() // COPY writes the rows without returning their ids
	dictConn, err := s.db.DB.Conn(w.ctx)
	if err != nil {
		return internal(err)
	}
	defer dictConn.Close()
	w.dict = dictConn
	c := &copier{w: w, conn: conn, in: in}
	coded := make(chan codedBatch, batchesQueued)
	g, ctx := errgroup.WithContext(w.ctx)
	g.Go(func() error {
		defer close(coded)
		return c.codeAll(ctx, coded)
	})
	g.Go(func() error { return c.copyAll(ctx, coded) })
	if err := g.Wait(); err != nil {
		return err
	}
	w.skipped += c.skipped
	return nil
}

// copier is the state of a PostgreSQL import's coder and copier.
type copier struct {
	w       *writer
	conn    *sql.Conn
	in      *batches
	skipped int // rows the copier left out (keepNew)
}

// codeAll codes the reader's batches and hands them to the copier.
func (c *copier) codeAll(ctx context.Context, out chan<- codedBatch) error {
	w := c.w
	for batch := range c.in.c {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		// Only the batch's own repeats: the copier looks up the ids
		// stored before (keepNew).
		batch, err := w.dedupe(nil, batch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			continue
		}
		w.dimsBuf = nil // the copier still reads the previous batch's
		dims, err := w.codeBatch(batch)
		if err != nil {
			return err
		}
		ids := false
		for _, i := range batch {
			ids = ids || i.InteractionID != ""
		}
		w.entries.resetIfLarge()
		select {
		case out <- codedBatch{rows: batch, dims: dims, ids: ids}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// copyAll streams the coded batches into COPY segments. A segment ends
// before a batch with interaction ids, which keepNew then checks on the
// transaction, and when the pending blocks grow large, which are then
// flushed (and at the end).
func (c *copier) copyAll(ctx context.Context, in <-chan codedBatch) error {
	w := c.w
	var next codedBatch // received, not yet streamed
	for {
		if next.rows == nil {
			select {
			case b, ok := <-in:
				if !ok {
					return w.flushBlocks()
				}
				next = b
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if next.ids {
			if err := c.keepNew(&next); err != nil {
				return err
			}
			if len(next.rows) == 0 {
				c.in.recycle(next.rows)
				next = codedBatch{}
				continue
			}
		}
		src := &streamSource{c: c, w: w, ctx: ctx, in: in, cur: next, row: -1}
		err := c.conn.Raw(func(driverConn any) error {
			c, ok := driverConn.(*stdlib.Conn)
			if !ok {
				return errors.New("COPY needs a pgx connection")
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"interactions"}, rawColumns, src)
			return err
		})
		if src.err != nil {
			return src.err
		}
		if err != nil {
			return duplicateID(internal(err))
		}
		if src.done {
			return w.flushBlocks()
		}
		next = src.pending
		if w.blocks.bytes >= blockFlushBytes {
			if err := w.flushBlocks(); err != nil {
				return err
			}
		}
	}
}

// keepNew leaves out of b (in place) the rows whose interaction id the
// import's transaction already has: stored before the import, or by an
// earlier segment of it. Their dictionary codes are already written,
// harmless as above.
func (c *copier) keepNew(b *codedBatch) error {
	w := c.w
	stored, err := w.storedOf(w.tx, b.rows)
	if err != nil || len(stored) == 0 {
		return err
	}
	kept := 0
	for k, i := range b.rows {
		if key, ok := i.DedupeKey(); ok {
			if _, already := stored[key]; already {
				c.skipped++
				continue
			}
		}
		b.rows[kept], b.dims[kept] = i, b.dims[k]
		kept++
	}
	b.rows, b.dims = b.rows[:kept], b.dims[:kept]
	return nil
}

// streamSource feeds one COPY segment from the coded batches, adding each
// api row to the pending blocks. It ends the segment before a batch with
// interaction ids (keeping it in pending) and when the blocks grow large.
type streamSource struct {
	c       *copier
	w       *writer
	ctx     context.Context
	in      <-chan codedBatch
	cur     codedBatch
	row     int
	pending codedBatch // received, for the next segment
	done    bool       // the input has ended
	err     error      // the context ended first
	values  [24]any    // rawColumns
}

func (s *streamSource) Next() bool {
	s.row++
	for s.row >= len(s.cur.rows) {
		if s.cur.rows != nil {
			s.c.in.recycle(s.cur.rows)
			s.cur = codedBatch{}
		}
		if s.w.blocks.bytes >= blockFlushBytes {
			return false // flush, then a new segment
		}
		select {
		case b, ok := <-s.in:
			if !ok {
				s.done = true
				return false
			}
			if b.ids {
				s.pending = b // looked up between segments
				return false
			}
			s.cur, s.row = b, 0
		case <-s.ctx.Done():
			s.err = context.Cause(s.ctx)
			return false
		}
	}
	if i := &s.cur.rows[s.row]; i.Counted() {
		s.w.blocks.add(i.Cat, i.Time, s.cur.dims[s.row], usageOf(i))
	}
	return true
}

func (s *streamSource) Values() ([]any, error) {
	i, v := &s.cur.rows[s.row], &s.values
	v[0], v[1], v[2], v[3], v[4] = i.Time.UTC().Truncate(time.Microsecond), i.Cat, i.EventKind, i.Question, i.Answer
	v[5], v[6], v[7], v[8], v[9] = i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID
	v[10], v[11], v[12], v[13] = i.UserID, i.ConversationID, interactionIDArg(*i), nil
	if d := s.cur.dims[s.row]; d != nil {
		v[13] = d // else NULL, for rows never counted
	}
	return usageArgs(v[:14], *i), nil // in place: v has room for them
}

func (s *streamSource) Err() error { return s.err }
