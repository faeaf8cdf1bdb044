package sqlstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sync/errgroup"

	"github.com/catsrv/catsrv/core/analytics"
)

// A PostgreSQL import runs as a pipeline of three goroutines: the reader
// (Append's caller: decoding, validation), the coder (dictionary codes and
// dims) and the copier, which streams the rows into one long COPY on the
// transaction's connection. The server inserts while the client decodes
// and codes the next rows, instead of waiting for each batch's round
// trips.
//
// The coder writes dictionary entries on a connection of its own, outside
// the import's transaction, because a connection in COPY can run nothing
// else. An import that fails may so leave dictionary entries no row
// refers to; they are immutable (cat, id, text) triples and harmless: the
// counts come only from the rows and rollups, which commit or not with the
// import.

// An import's interaction ids are looked up where its own rows are
// visible: on its transaction, by the copier, between COPY segments
// (keepNew). A batch with ids so ends the segment before it; no id is
// kept in memory past its batch, however long the import.

// codedBatch is a batch with what the copier needs of it.
type codedBatch struct {
	rows []analytics.Interaction
	dims [][]byte   // per row, nil for rows never counted
	cube [][3]int64 // per row, its topic, model and persona codes
	ids  bool       // some row has an interaction id
}

// runPipelined is run for a PostgreSQL import (w.conn set), with the
// batches run has already received first. It opens the dictionary
// connection (w.dict).
func (w *writer) runPipelined(first [][]analytics.Interaction) error {
	w.held.lose() // COPY writes the rows without returning their ids
	dictConn, err := w.openDict()
	if err != nil {
		return internal(err)
	}
	w.dictConn, w.dict = dictConn, dictConn
	coded := make(chan codedBatch, pipelineDepth)
	g, ctx := errgroup.WithContext(w.ctx)
	g.Go(func() error {
		defer close(coded)
		return w.codeAll(ctx, first, coded)
	})
	g.Go(func() error { return w.copyAll(ctx, coded) })
	return g.Wait()
}

// codeAll codes the batches of first, then the reader's, and hands them
// to the copier.
func (w *writer) codeAll(ctx context.Context, first [][]analytics.Interaction, out chan<- codedBatch) error {
	batches := func(yield func([]analytics.Interaction) bool) {
		for _, b := range first {
			if !yield(b) {
				return
			}
		}
		for b := range w.batches {
			if !yield(b) {
				return
			}
		}
	}
	for batch := range batches {
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
		cube, ids := make([][3]int64, len(batch)), false
		for k, i := range batch {
			ids = ids || i.InteractionID != ""
			if i.Counted() {
				for d := range cube[k] {
					cube[k][d] = w.entries.codes[w.rowEntries[k][d]]
				}
			}
		}
		w.entries.resetIfLarge()
		select {
		case out <- codedBatch{rows: batch, dims: dims, cube: cube, ids: ids}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// copyAll streams the coded batches into COPY segments. A segment ends
// before a batch with interaction ids, which keepNew then checks on the
// transaction, and when the pending rollups and blocks grow large, which
// are then flushed (and at the end).
func (w *writer) copyAll(ctx context.Context, in <-chan codedBatch) error {
	var next codedBatch // received, not yet streamed
	for {
		if next.rows == nil {
			select {
			case b, ok := <-in:
				if !ok {
					return w.flushDerived()
				}
				next = b
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if next.ids {
			if err := w.keepNew(&next); err != nil {
				return err
			}
			if len(next.rows) == 0 {
				w.recycle(next.rows)
				next = codedBatch{}
				continue
			}
		}
		src := &streamSource{w: w, ctx: ctx, in: in, cur: next, row: -1}
		err := w.conn.Raw(func(driverConn any) error {
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
			return w.flushDerived()
		}
		next = src.pending
		if len(w.rollups) >= rollupFlushKeys || w.blocks.bytes >= blockFlushBytes {
			if err := w.flushDerived(); err != nil {
				return err
			}
		}
	}
}

// keepNew leaves out of b (in place) the rows whose interaction id the
// import's transaction already has: stored before the import, or by an
// earlier segment of it. Their dictionary codes are already written,
// harmless as above.
func (w *writer) keepNew(b *codedBatch) error {
	stored, err := w.storedOf(w.tx, b.rows)
	if err != nil || len(stored) == 0 {
		return err
	}
	kept := 0
	for k, i := range b.rows {
		if key, ok := i.DedupeKey(); ok {
			if _, already := stored[key]; already {
				w.copySkipped++
				continue
			}
		}
		b.rows[kept], b.dims[kept], b.cube[kept] = i, b.dims[k], b.cube[k]
		kept++
	}
	b.rows, b.dims, b.cube = b.rows[:kept], b.dims[:kept], b.cube[:kept]
	return nil
}

// streamSource feeds one COPY segment from the coded batches, counting
// each row into the pending rollups as it goes. It ends the segment
// before a batch with interaction ids (keeping it in pending) and when
// the rollups or blocks grow large.
type streamSource struct {
	w       *writer
	ctx     context.Context
	in      <-chan codedBatch
	cur     codedBatch
	row     int
	pending codedBatch // received, for the next segment
	done    bool       // the input has ended
	err     error      // the context ended first
	raw     rawSource
}

func (s *streamSource) Next() bool {
	s.row++
	for s.row >= len(s.cur.rows) {
		if s.cur.rows != nil {
			s.w.recycle(s.cur.rows)
			s.cur = codedBatch{}
		}
		if len(s.w.rollups) >= rollupFlushKeys || s.w.blocks.bytes >= blockFlushBytes {
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
		s.w.rollups[rollupKey{cat: i.Cat, day: dayOf(i.Time), codes: s.cur.cube[s.row]}]++
		s.w.blocks.add(i.Cat, i.Time, s.cur.dims[s.row])
	}
	return true
}

func (s *streamSource) Values() ([]any, error) {
	s.raw.batch, s.raw.dims, s.raw.row = s.cur.rows, s.cur.dims, s.row
	return s.raw.Values()
}

func (s *streamSource) Err() error { return s.err }

// recycle hands a written batch back to the reader.
func (w *writer) recycle(batch []analytics.Interaction) {
	select {
	case w.spare <- batch:
	default:
	}
}
