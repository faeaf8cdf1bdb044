package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
)

// Batch sizes of the multi-row statements. Larger batches cut round trips
// and statement parsing; the bind-parameter limits cap them (see
// dialect.maxParams).
const (
	maxBatchRows = 1000
	// rollupFlushKeys is how many distinct rollup rows Append aggregates in
	// memory before writing them: bounded memory on 10M-line imports,
	// while repeated combinations within a flush are written once.
	rollupFlushKeys = 20000
	// pipelineDepth is how many batches may wait for the writer.
	pipelineDepth = 2
)

// writer writes one Append's batches in its transaction: the raw rows at
// once, the rollups and blocks (blocks.go) gathered in memory and flushed
// now and then. It runs on its own goroutine (a PostgreSQL import on two,
// see pipeline.go), the only one using the transaction until it ends.
type writer struct {
	ctx     context.Context
	tx      *sql.Tx
	dialect dialect
	// stmts are the batch statements prepared in this transaction
	// (SQLite); nil on PostgreSQL, where pgx's statement cache prepares
	// each text once per connection (see exec).
	stmts map[stmtKey]*sql.Stmt
	args  []any
	// dict is where dictionary entries are written and read: tx, unless
	// a PostgreSQL import gives them a connection of their own (see
	// pipeline.go); dictStmts and dictArgs are its own.
	dict      sqlRunner
	dictStmts map[stmtKey]*sql.Stmt
	dictArgs  []any

	batches  chan []analytics.Interaction
	spare    chan []analytics.Interaction
	rawBatch int
	rollups  map[rollupKey]int64
	blocks   *blockBuffer
	entries  *entries
	// conn, when set, is the PostgreSQL connection of tx: raw rows then
	// go in by COPY (see pipeline.go), unless the input is one batch
	// (run). openDict opens the pipeline's dictionary connection, dictConn.
	conn     *sql.Conn
	openDict func() (*sql.Conn, error)
	dictConn *sql.Conn
	// store, when set, shares its prepared full-batch insert of raw rows
	// across transactions (sharedstmt.go).
	store *Store
	// compactAlways makes every flush that leaves a small block merge
	// the day's small blocks (tests; see blockcompact.go).
	compactAlways bool
	// lastBlocks makes PostgreSQL fill each day's last block, as SQLite
	// does: the migration that creates the blocks runs before their
	// sequence exists.
	lastBlocks bool
	// rowEntries and dimsBuf are codeBatch's per-batch scratch.
	rowEntries [][5]int32
	dimsBuf    []byte
	// ids holds the (CAT, interaction id) pairs of the batch being
	// deduplicated; skipped and copySkipped (the copier's, pipeline.go)
	// count the interactions left out as already stored (dedupe.go).
	ids         map[[2]string]struct{}
	skipped     int
	copySkipped int
	// codeCache, when set, gives the codes of entries committed Appends
	// used (codecache.go), read at the collections counter collections
	// (once collectionsRead); learned are the codes this writer looked
	// up or added, cached once its transaction commits.
	codeCache       *codeCache
	collections     int64
	collectionsRead bool
	learned         []learnedCode
	// held, when set, gathers the api rows written, with their ids, to
	// tell the follower once the transaction commits (tell.go).
	held *held
	// alone is set when a Load has the SQLite file to itself (load.go):
	// statements are then prepared on the transaction only, since a
	// statement prepared on the pool would open another connection, which
	// waits for the Load to end.
	alone bool
}

func newWriter(ctx context.Context, tx *sql.Tx, d dialect) *writer {
	var stmts map[stmtKey]*sql.Stmt
	if d == sqliteDialect {
		stmts = map[stmtKey]*sql.Stmt{}
	}
	return &writer{
		ctx: ctx, tx: tx, dialect: d,
		stmts: stmts,
		dict:  tx, dictStmts: map[stmtKey]*sql.Stmt{},
		batches:  make(chan []analytics.Interaction, pipelineDepth),
		spare:    make(chan []analytics.Interaction, pipelineDepth+1),
		rawBatch: batchRows(d, len(rawColumns)),
		rollups:  map[rollupKey]int64{},
		blocks:   newBlockBuffer(),
		entries:  newEntries(),
	}
}

// batchRows is how many rows of cols columns one statement may carry.
func batchRows(d dialect, cols int) int {
	return min(maxBatchRows, d.maxParams()/cols)
}

// emptyBatch returns a batch for the reader to fill, reusing one the
// writer is done with when there is one.
func (w *writer) emptyBatch() []analytics.Interaction {
	select {
	case b := <-w.spare:
		return b[:0]
	default:
		return make([]analytics.Interaction, 0, w.rawBatch)
	}
}

// run writes batches until the channel closes, then the remaining rollups.
// It stops at the first error.
func (w *writer) run() error {
	if w.conn != nil {
		// A PostgreSQL Append. The reader sends batches of copyBatchRows:
		// an input that ends within the first (an HTTP batch) is written
		// on the transaction, in multi-row inserts of bound values, which
		// costs fewer round trips than a second connection and a COPY;
		// a longer one (an import) goes through the COPY pipeline.
		first, ok := <-w.batches
		if !ok {
			return w.ctxErr()
		}
		second, more := <-w.batches
		if more {
			return w.runPipelined([][]analytics.Interaction{first, second})
		}
		if err := w.ctxErr(); err != nil {
			return err
		}
		w.conn = nil
		for start := 0; start < len(first); start += maxBatchRows {
			if err := w.write(first[start:min(len(first), start+maxBatchRows)]); err != nil {
				return err
			}
		}
		return w.flushDerived()
	}
	for batch := range w.batches {
		if err := w.ctx.Err(); err != nil {
			return context.Cause(w.ctx)
		}
		if err := w.write(batch); err != nil {
			return err
		}
		w.recycle(batch)
	}
	if err := w.ctx.Err(); err != nil {
		return context.Cause(w.ctx)
	}
	return w.flushDerived()
}

// flushDerived writes the pending blocks and rollups: the rollups last,
// so that on PostgreSQL a turn holds its rollup rows only until it
// commits.
func (w *writer) flushDerived() error {
	if err := w.flushBlocks(); err != nil {
		return err
	}
	return w.flushRollups()
}

func (w *writer) write(batch []analytics.Interaction) error {
	batch, dims, err := w.stage(batch)
	if err != nil || len(batch) == 0 {
		return err
	}
	if err := w.insertRaw(batch, dims); err != nil {
		return err
	}
	w.entries.resetIfLarge()
	if len(w.rollups) >= rollupFlushKeys || w.blocks.bytes >= blockFlushBytes {
		return w.flushDerived()
	}
	return nil
}

// stage readies a batch for its insert: it leaves out the interactions
// already stored (dedupe), codes the rest's dictionary entries (codeBatch)
// and adds the counted ones to the pending rollups and blocks. It returns
// the interactions to insert and their dims values.
func (w *writer) stage(batch []analytics.Interaction) ([]analytics.Interaction, [][]byte, error) {
	batch, err := w.dedupe(w.tx, batch)
	if err != nil || len(batch) == 0 {
		return nil, nil, err
	}
	dims, err := w.codeBatch(batch)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range batch {
		if i.Counted() {
			w.addRollup(i, w.rowEntries[k])
			w.blocks.add(i.Cat, i.Time, dims[k])
		}
	}
	return batch, dims, nil
}

// rawColumns are the raw table's columns in insert order.
var rawColumns = []string{
	"occurred_at", "cat", "event_kind", "question", "answer", "topic", "model",
	"persona", "question_id", "answer_id", "user_id", "conversation_id", "interaction_id", "dims",
}

// codeBatch numbers the dictionary entries of the batch's api rows (kept
// per row in rowEntries), gives the new ones their database codes and
// returns each row's dims value (nil for rows of other event kinds). The
// values share one buffer, valid until the next call.
func (w *writer) codeBatch(batch []analytics.Interaction) ([][]byte, error) {
	w.rowEntries = w.rowEntries[:0]
	for _, i := range batch {
		var numbers [5]int32
		if i.Counted() {
			for n, d := range entriesOf(i) {
				numbers[n] = w.entries.number(d)
			}
		}
		w.rowEntries = append(w.rowEntries, numbers)
	}
	if err := w.resolveCodes(); err != nil {
		return nil, err
	}
	w.dimsBuf = w.dimsBuf[:0]
	ends := make([]int, len(batch))
	for k, i := range batch {
		if i.Counted() {
			var codes [dimsCodes]int64
			for n, e := range w.rowEntries[k] {
				codes[n] = w.entries.codes[e]
			}
			w.dimsBuf = appendDims(w.dimsBuf, codes)
		}
		ends[k] = len(w.dimsBuf)
	}
	dims := make([][]byte, len(batch))
	start := 0
	for k, i := range batch {
		if i.Counted() {
			dims[k] = w.dimsBuf[start:ends[k]:ends[k]]
		}
		start = ends[k]
	}
	return dims, nil
}

func (w *writer) insertRaw(batch []analytics.Interaction, dims [][]byte) error {
	w.args = w.appendRawArgs(w.args[:0], batch, dims)
	args := w.args
	query := func() string { return rawInsert(w.dialect, len(batch)) }
	key := stmtKey{"interactions", len(batch)}
	// SQLite only: on PostgreSQL w.stmts is nil and pgx's statement cache
	// already keeps the statement per connection (exec).
	if w.store != nil && w.stmts != nil && len(batch) == maxBatchRows && !w.alone {
		if _, ok := w.stmts[key]; !ok {
			stmt, err := w.store.rawInsert.in(w.ctx, w.store.db.DB, w.tx, query) //nolint:sqlclosecheck // closed with the writer's others (close)
			if err != nil {
				return internal(err)
			}
			w.stmts[key] = stmt
		}
	}
	return w.insertRows(batch, key, query, args)
}

// insertRows runs query, an insert of the batch's raw rows (and perhaps
// more), and gathers the rows' ids for the follower when it is told
// (held).
func (w *writer) insertRows(batch []analytics.Interaction, key stmtKey, query func() string, args []any) error {
	if w.held == nil {
		return duplicateID(w.exec(key, query, args))
	}
	ids, pos, err := w.insertReturning(batch, key, query, args)
	if err != nil {
		return duplicateID(err)
	}
	w.held.add(batch, ids, pos)
	return nil
}

// appendRawArgs appends the values of the batch's raw rows, in rawColumns
// order, to args.
func (w *writer) appendRawArgs(args []any, batch []analytics.Interaction, dims [][]byte) []any {
	for k, i := range batch {
		var d any // NULL, not an empty value, for rows never counted
		if dims[k] != nil {
			d = dims[k]
		}
		args = append(args, w.dialect.timeArg(i.Time), i.Cat, i.EventKind, i.Question, i.Answer,
			i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID, i.UserID, i.ConversationID, interactionIDArg(i), d)
	}
	return args
}

// rawInsert is the insert of rows raw rows.
func rawInsert(d dialect, rows int) string {
	return "INSERT INTO interactions (" + strings.Join(rawColumns, ", ") + ") VALUES " + d.valuesClause(rows, len(rawColumns))
}

// stmtKey names a batch statement: its table and how many rows it carries.
type stmtKey struct {
	table string
	rows  int
}

// exec runs a batch statement in the transaction, building each distinct
// one once per transaction: most batches share the full-batch statement.
// On SQLite it is prepared once per transaction. On PostgreSQL it goes to
// the driver as text with its values bound: pgx's statement cache prepares
// each text once per connection, so a transaction of one small batch (a
// chat turn) does not pay a prepare, and its release, per statement.
func (w *writer) exec(key stmtKey, query func() string, args []any) error {
	return execCached(w.ctx, w.tx, w.stmts, key, query, args)
}

// sqlRunner is what the writer runs statements on: its transaction, or
// for the dictionaries of a PostgreSQL import a connection of their own.
type sqlRunner interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// execCached runs the statement key names on on: prepared once and kept
// in stmts, or when stmts is nil (PostgreSQL) sent as text for the
// driver's statement cache.
func execCached(ctx context.Context, on sqlRunner, stmts map[stmtKey]*sql.Stmt, key stmtKey, query func() string, args []any) error {
	_, err := execResult(ctx, on, stmts, key, query, args)
	return err
}

// execResult is execCached, returning the statement's result.
func execResult(ctx context.Context, on sqlRunner, stmts map[stmtKey]*sql.Stmt, key stmtKey, query func() string, args []any) (sql.Result, error) {
	if stmts == nil {
		res, err := on.ExecContext(ctx, query(), args...)
		if err != nil {
			return nil, internal(err)
		}
		return res, nil
	}
	stmt, ok := stmts[key]
	if !ok {
		var err error
		if stmt, err = on.PrepareContext(ctx, query()); err != nil {
			return nil, internal(err)
		}
		stmts[key] = stmt
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return nil, internal(err)
	}
	return res, nil
}

// close releases the prepared statements and the dictionary connection.
// Call it once run has returned.
func (w *writer) close() {
	for _, stmts := range []map[stmtKey]*sql.Stmt{w.stmts, w.dictStmts} {
		for _, stmt := range stmts {
			_ = stmt.Close()
		}
	}
	if w.dictConn != nil {
		_ = w.dictConn.Close()
	}
}

// ctxErr is the cause of the writer's context once it is done, else nil.
func (w *writer) ctxErr() error {
	if w.ctx.Err() != nil {
		return context.Cause(w.ctx)
	}
	return nil
}
