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
)

// writer writes batches of interactions in one transaction: the raw rows
// at once, their code blocks (blocks.go) gathered in memory and flushed
// now and then. One goroutine uses it at a time.
type writer struct {
	ctx     context.Context
	tx      *sql.Tx
	dialect dialect
	// stmts are the statements prepared in this transaction (SQLite); nil
	// on PostgreSQL, where pgx's statement cache prepares each text once
	// per connection.
	stmts map[stmtKey]*sql.Stmt
	args  []any
	// dict runs the dictionary statements: tx, or during a PostgreSQL
	// import a connection of its own (importer.go).
	dict sqlRunner

	blocks  *blockBuffer
	entries *entries
	// rowEntries and dimsBuf are codeBatch's per-batch scratch.
	rowEntries [][5]int32
	dimsBuf    []byte
	// ids holds the (CAT, interaction id) pairs of the batch being
	// deduplicated; skipped counts the interactions left out as already
	// stored (dedupe.go).
	ids     map[[2]string]struct{}
	skipped int
	// held, when set, gathers the api rows written, with their ids, to
	// tell the follower once the transaction commits (tell.go).
	held *held
	// store, when set, lends its caches (codecache.go): codes gives
	// entries their codes at counter collections (read once, when
	// collectionsRead) and learned gathers the codes to cache once the
	// transaction commits.
	store           *Store
	collections     int64
	collectionsRead bool
	learned         []learnedCode
}

func newWriter(ctx context.Context, tx *sql.Tx, d dialect) *writer {
	var stmts map[stmtKey]*sql.Stmt
	if d == sqliteDialect {
		stmts = map[stmtKey]*sql.Stmt{}
	}
	return &writer{
		ctx: ctx, tx: tx, dialect: d, stmts: stmts, dict: tx,
		blocks:  newBlockBuffer(),
		entries: newEntries(),
	}
}

// batchRows is how many rows of cols columns one statement may carry.
func batchRows(d dialect, cols int) int {
	return min(maxBatchRows, d.maxParams()/cols)
}

// writeAll writes the interactions in batches, then the pending blocks.
func (w *writer) writeAll(in []analytics.Interaction) error {
	for start := 0; start < len(in); start += maxBatchRows {
		if err := w.write(in[start:min(len(in), start+maxBatchRows)]); err != nil {
			return err
		}
	}
	return w.flushBlocks()
}

// write stores a batch: it leaves out the interactions already stored
// (dedupe), codes the rest's dictionary entries (codeBatch), inserts the
// rows and adds the api rows to the pending blocks.
func (w *writer) write(batch []analytics.Interaction) error {
	batch, err := w.dedupe(w.tx, batch)
	if err != nil || len(batch) == 0 {
		return err
	}
	dims, err := w.codeBatch(batch)
	if err != nil {
		return err
	}
	for k := range batch {
		if i := &batch[k]; i.Counted() {
			w.blocks.add(i.Cat, i.Time, dims[k], usageOf(i))
		}
	}
	if err := w.insertRaw(batch, dims); err != nil {
		return err
	}
	w.entries.resetIfLarge()
	if w.blocks.bytes >= blockFlushBytes {
		return w.flushBlocks()
	}
	return nil
}

// rawColumns are the raw table's columns in insert order, the usage and
// feedback columns (usage.go) last.
var rawColumns = append([]string{
	"occurred_at", "cat", "event_kind", "question", "answer", "topic", "model",
	"persona", "question_id", "answer_id", "user_id", "conversation_id", "interaction_id", "dims",
}, usageRawColumns...)

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

// insertRaw inserts the batch's raw rows, gathering their ids for the
// follower when it is told (held).
func (w *writer) insertRaw(batch []analytics.Interaction, dims [][]byte) error {
	w.args = w.appendRawArgs(w.args[:0], batch, dims)
	key := stmtKey{"interactions", len(batch)}
	query := func() string { return rawInsert(w.dialect, len(batch)) }
	if w.store != nil && w.stmts != nil && len(batch) == maxBatchRows {
		if _, ok := w.stmts[key]; !ok {
			stmt, err := w.store.batchInsert.in(w.ctx, w.store.db.DB, w.tx, query) //nolint:sqlclosecheck // closed with the writer's others (close)
			if err != nil {
				return err
			}
			w.stmts[key] = stmt
		}
	}
	if w.held == nil {
		_, err := execResult(w.ctx, w.tx, w.stmts, key, query, w.args)
		return duplicateID(err)
	}
	ids, pos, err := w.insertReturning(batch, key, query, w.args)
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
		args = usageArgs(args, i)
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

// exec runs a batch statement in the transaction (execResult).
func (w *writer) exec(key stmtKey, query func() string, args []any) error {
	_, err := execResult(w.ctx, w.tx, w.stmts, key, query, args)
	return err
}

// sqlRunner is a transaction or a connection.
type sqlRunner interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// execResult runs the statement key names, its text built once: on SQLite
// prepared once per transaction and kept in stmts; on PostgreSQL (stmts
// nil) sent as text, which pgx's statement cache prepares once per
// connection.
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

// close releases the prepared statements.
func (w *writer) close() {
	for _, stmt := range w.stmts {
		_ = stmt.Close()
	}
}

// ctxErr is the cause of the writer's context once it is done, else nil.
func (w *writer) ctxErr() error {
	if w.ctx.Err() != nil {
		return context.Cause(w.ctx)
	}
	return nil
}
