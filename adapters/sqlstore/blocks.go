package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// dims_blocks is a column-wise copy of the api rows for the raw pass and
// the feed's snapshot: per CAT and UTC day, blocks of up to blockMaxRows
// rows, each row a record of unsigned varints: its time within the day
// (microseconds), its dims (dims.go, five codes), then its usage
// (blockUsage: input tokens, output tokens, cost in 1e-9 USD, latency
// bucket plus one, 0 without latency), so a pass reads a year in a few
// thousand values. Its feedback rating, which changes, is not copied.
// Written in the transaction of the rows they copy; rebuilt from the
// rows' dims and usage columns (backfillBlocks).

// blockMaxRows bounds a block, which an append rewrites.
const blockMaxRows = 1024

// blockFlushBytes is how much pending block data a writer holds before
// writing it.
const blockFlushBytes = 8 << 20

// dayMicros is one day in microseconds.
const dayMicros = 86_400_000_000

// blockKey is a CAT's UTC day.
type blockKey struct {
	cat string
	day int64
}

// pendingBlock is the rows of one day waiting to be written.
type pendingBlock struct {
	rows int
	data []byte
}

// blockBuffer collects rows for dims_blocks.
type blockBuffer struct {
	days  map[blockKey]*pendingBlock
	bytes int
}

func newBlockBuffer() *blockBuffer { return &blockBuffer{days: map[blockKey]*pendingBlock{}} }

// blockUsageFields is how many usage varints a block record holds.
const blockUsageFields = 4

// blockUsage is the usage a block record holds: the row's tokens, its
// cost in 1e-9 USD and its latency bucket plus one (0: no latency).
type blockUsage struct {
	in, out, cost int64
	latency       int32
}

// usageOf returns an interaction's usage as its block record holds it,
// the values of its usage columns (usageArgs).
func usageOf(i *analytics.Interaction) blockUsage {
	u := blockUsage{in: i.Usage.InputTokens, out: i.Usage.OutputTokens, cost: analytics.CostNanos(i.Usage.CostUSD)}
	if i.Usage.LatencyMS != nil {
		u.latency = int32(analytics.LatencyBucket(*i.Usage.LatencyMS)) + 1 // #nosec G115 -- LatencyBuckets is far below 2^31
	}
	return u
}

// appendUsage appends the usage's varints (values are stored as their
// two's complement bits: none is negative).
func appendUsage(dst []byte, u blockUsage) []byte {
	dst = binary.AppendUvarint(dst, uint64(u.in))       // #nosec G115 -- bits kept, decoded back
	dst = binary.AppendUvarint(dst, uint64(u.out))      // #nosec G115 -- bits kept, decoded back
	dst = binary.AppendUvarint(dst, uint64(u.cost))     // #nosec G115 -- bits kept, decoded back
	return binary.AppendUvarint(dst, uint64(u.latency)) // #nosec G115 -- bits kept, decoded back
}

// add appends a row: its time, its dims value and its usage.
func (b *blockBuffer) add(cat string, t time.Time, dims []byte, u blockUsage) {
	micros := t.UnixMicro()
	day := dayOf(t)
	k := blockKey{cat: cat, day: day}
	p := b.days[k]
	if p == nil {
		p = &pendingBlock{}
		b.days[k] = p
	}
	before := len(p.data)
	p.data = binary.AppendUvarint(p.data, uint64(micros-day*dayMicros)) // #nosec G115 -- within the day
	p.data = append(p.data, dims...)
	p.data = appendUsage(p.data, u)
	p.rows++
	b.bytes += len(p.data) - before
}

// flushBlocks writes the pending rows into dims_blocks: on PostgreSQL as
// new blocks (blockcompact.go), on SQLite appended to each day's last
// block (fillBlocks).
func (w *writer) flushBlocks() error {
	if w.dialect == postgresDialect {
		return w.insertBlocks()
	}
	return w.fillBlocks()
}

// fillBlocks writes the pending rows appended to the day's last block
// while it has room, in new blocks after that.
func (w *writer) fillBlocks() error {
	for k, p := range w.blocks.days {
		last, rows, found, err := w.lastBlock(k)
		if err != nil {
			return err
		}
		data, left := p.data, p.rows
		for left > 0 {
			if !found || rows >= blockMaxRows {
				if found {
					last++
				}
				n, cut := splitRecords(data, min(left, blockMaxRows))
				if err := w.insertBlock(k, last, n, data[:cut]); err != nil {
					return err
				}
				data, left, rows, found = data[cut:], left-n, n, true
				continue
			}
			n, cut := splitRecords(data, min(left, blockMaxRows-rows))
			if err := w.appendBlock(k, last, n, data[:cut]); err != nil {
				return err
			}
			data, left, rows = data[cut:], left-n, rows+n
		}
	}
	clear(w.blocks.days)
	w.blocks.bytes = 0
	return nil
}

// splitRecords returns how many of the first n records data holds and
// where they end.
func splitRecords(data []byte, n int) (int, int) {
	at := 0
	for k := range n {
		for range 1 + dimsCodes + blockUsageFields {
			_, size := binary.Uvarint(data[at:])
			if size <= 0 {
				return k, at
			}
			at += size
		}
	}
	return n, at
}

// lastBlock returns the number and row count of the day's last block.
func (w *writer) lastBlock(k blockKey) (block int64, rows int, found bool, err error) {
	query := "SELECT block, row_count FROM dims_blocks WHERE cat = " + w.dialect.placeholders(1, 1) +
		" AND day = " + w.dialect.placeholders(2, 1) + " ORDER BY block DESC LIMIT 1"
	err = w.tx.QueryRowContext(w.ctx, query, k.cat, k.day).Scan(&block, &rows)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, internal(err)
	}
	return block, rows, true, nil
}

func (w *writer) appendBlock(k blockKey, block int64, rows int, data []byte) error {
	p := w.dialect.placeholders
	query := func() string {
		return "UPDATE dims_blocks SET row_count = row_count + " + p(1, 1) + ", data = data || " + p(2, 1) +
			" WHERE cat = " + p(3, 1) + " AND day = " + p(4, 1) + " AND block = " + p(5, 1)
	}
	return w.exec(stmtKey{"dims_blocks_append", 0}, query, []any{rows, data, k.cat, k.day, block})
}

func (w *writer) insertBlock(k blockKey, block int64, rows int, data []byte) error {
	query := func() string {
		return "INSERT INTO dims_blocks (cat, day, block, row_count, data) VALUES (" + w.dialect.placeholders(1, 5) + ")"
	}
	return w.exec(stmtKey{"dims_blocks_insert", 0}, query, []any{k.cat, k.day, block, rows, data})
}

// eachBlockRow decodes a block, calling fn with each row's time in
// microseconds, its codes and its usage; it returns how many rows it
// decoded.
func eachBlockRow(day int64, data []byte, fn func(micros int64, codes *[dimsCodes]uint64, u *blockUsage)) (int, error) {
	var (
		codes [dimsCodes]uint64
		usage [blockUsageFields]uint64
		u     blockUsage
	)
	rows := 0
	for len(data) > 0 {
		offset, n := binary.Uvarint(data)
		if n <= 0 || offset >= dayMicros {
			return rows, errCorruptDims
		}
		data = data[n:]
		for k := range codes {
			v, n := binary.Uvarint(data)
			if n <= 0 || v == 0 {
				return rows, errCorruptDims
			}
			codes[k] = v
			data = data[n:]
		}
		for k := range usage {
			v, n := binary.Uvarint(data)
			if n <= 0 {
				return rows, errCorruptDims
			}
			usage[k] = v
			data = data[n:]
		}
		u = blockUsage{in: int64(usage[0]), out: int64(usage[1]), cost: int64(usage[2]), latency: int32(usage[3])} // #nosec G115 -- bits written by appendUsage
		fn(day*dayMicros+int64(offset), &codes, &u)                                                                // #nosec G115 -- below dayMicros
		rows++
	}
	return rows, nil
}

// blocksTable creates dims_blocks.
func blocksTable(d dialect) []string {
	bigint, blob, withoutRowID := "INTEGER", "BLOB", " WITHOUT ROWID"
	if d == postgresDialect {
		bigint, blob, withoutRowID = "BIGINT", "BYTEA", ""
	}
	return []string{`CREATE TABLE dims_blocks (
			cat TEXT NOT NULL,
			day ` + bigint + ` NOT NULL,
			block ` + bigint + ` NOT NULL,
			row_count ` + bigint + ` NOT NULL,
			data ` + blob + ` NOT NULL,
			PRIMARY KEY (cat, day, block)
		)` + withoutRowID}
}

// blockBackfillRows is how many rows backfillBlocks reads per round.
const blockBackfillRows = 10000

// usageBlockColumns reads a row's usage as its block record holds it.
const usageBlockColumns = ", input_tokens, output_tokens, cost_nanos, COALESCE(latency_bucket + 1, 0)"

// backfillBlocks copies the api rows into dims_blocks, a round of rows
// at a time (the transaction's one connection cannot write while a
// result is open). withUsage reads their usage columns; without (the
// schema before them) the records hold no usage, which a later step
// rebuilds (rebuildBlocks).
func backfillBlocks(ctx context.Context, tx *sql.Tx, d dialect, withUsage bool) error {
	// Filling each day's last block, as SQLite does, also on PostgreSQL:
	// this migration runs before the blocks' sequence exists.
	w := newWriter(ctx, tx, d)
	defer w.close()
	micros := "occurred_at"
	if d == postgresDialect {
		micros = "CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"
	}
	usage := ", 0, 0, 0, 0"
	if withUsage {
		usage = usageBlockColumns
	}
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, cat, " + micros + ", dims" + usage + " FROM interactions WHERE id > " + d.placeholders(1, 1) +
		" AND event_kind = 'api' ORDER BY id LIMIT " + d.placeholders(2, 1)
	var last int64
	for {
		n, err := w.backfillRound(query, &last)
		if err != nil {
			return err
		}
		if n == 0 {
			return w.fillBlocks()
		}
		if w.blocks.bytes >= blockFlushBytes {
			if err := w.fillBlocks(); err != nil {
				return err
			}
		}
	}
}

// rebuildBlocks writes every block again from the api rows, with their
// usage: the step that brought usage into the records.
func rebuildBlocks(ctx context.Context, tx *sql.Tx, d dialect) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM dims_blocks"); err != nil {
		return internal(err)
	}
	return backfillBlocks(ctx, tx, d, true)
}

func (w *writer) backfillRound(query string, last *int64) (int, error) {
	rows, err := w.tx.QueryContext(w.ctx, query, *last, blockBackfillRows)
	if err != nil {
		return 0, internal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			cat  string
			at   int64
			dims []byte
			u    blockUsage
		)
		if err := rows.Scan(last, &cat, &at, &dims, &u.in, &u.out, &u.cost, &u.latency); err != nil {
			return n, internal(err)
		}
		if len(dims) == 0 {
			return n, internal(errors.New("an api row without dims"))
		}
		w.blocks.add(cat, time.UnixMicro(at).UTC(), dims, u)
		n++
	}
	if err := rows.Err(); err != nil {
		return n, internal(err)
	}
	return n, nil
}
