package sqlstore

import (
	"database/sql"
	"math/rand/v2"
	"strconv"
	"strings"
)

// On PostgreSQL, where writers commit concurrently, a flush never rewrites
// a block (whose row lock would queue every turn of a CAT behind the
// last): it inserts new blocks, numbered from dims_blocks_seq, and now and
// then merges a day's small blocks into full ones (compactBlocks).

// compactEvery is one in how many flushes of a day that leaves a small
// block merges the day's small blocks (a variable for tests).
var compactEvery = 32

// compactMaxBlocks bounds the small blocks one merge takes.
const compactMaxBlocks = 256

// insertBlocks writes the pending rows as new blocks of at most
// blockMaxRows rows (PostgreSQL).
func (w *writer) insertBlocks() error {
	blocks, compact := w.newBlocks()
	for _, b := range blocks {
		if err := w.insertNumberedBlock(b.key, b.rows, b.data); err != nil {
			return err
		}
	}
	for _, k := range compact {
		if err := w.compactBlocks(k); err != nil {
			return err
		}
	}
	w.clearBlocks()
	return nil
}

// newBlock is a block a PostgreSQL flush inserts.
type newBlock struct {
	key  blockKey
	rows int
	data []byte
}

// newBlocks splits the pending rows into new blocks of at most
// blockMaxRows rows, and picks the days whose small blocks this flush
// merges: now and then, a day it leaves a small block in.
func (w *writer) newBlocks() (blocks []newBlock, compact []blockKey) {
	for k, p := range w.blocks.days {
		data, left := p.data, p.rows
		small := false
		for left > 0 {
			n, cut := splitRecords(data, min(left, blockMaxRows))
			blocks = append(blocks, newBlock{key: k, rows: n, data: data[:cut]})
			small = small || n < blockMaxRows
			data, left = data[cut:], left-n
		}
		if small && rand.N(compactEvery) == 0 { // #nosec G404 -- spreads the merges, no secret
			compact = append(compact, k)
		}
	}
	return blocks, compact
}

// clearBlocks forgets the pending rows, written.
func (w *writer) clearBlocks() {
	clear(w.blocks.days)
	w.blocks.bytes = 0
}

// numberedBlocks is the VALUES list of that many new blocks, their values
// bound from parameter first on, as insertNumberedBlock has them.
func numberedBlocks(first, blocks int) string {
	var b strings.Builder
	for k := range blocks {
		if k > 0 {
			b.WriteString(", ")
		}
		p := first + 4*k
		b.WriteString("($" + strconv.Itoa(p) + ", $" + strconv.Itoa(p+1) + ", nextval('dims_blocks_seq'), $" +
			strconv.Itoa(p+2) + ", $" + strconv.Itoa(p+3) + ")")
	}
	return b.String()
}

func (w *writer) insertNumberedBlock(k blockKey, rows int, data []byte) error {
	query := func() string {
		return "INSERT INTO dims_blocks (cat, day, block, row_count, data) VALUES " + numberedBlocks(1, 1)
	}
	return w.exec(stmtKey{"dims_blocks_insert_numbered", 0}, query, []any{k.cat, k.day, rows, data})
}

// compactBlocks merges up to compactMaxBlocks of the day's small blocks
// into full ones, in the writer's transaction. It takes only blocks no
// other transaction is merging (SKIP LOCKED), so it never waits and never
// deadlocks; a concurrent raw pass sees the day before or after the merge,
// never both.
func (w *writer) compactBlocks(k blockKey) error {
	merged, count, taken, err := w.takeSmallBlocks(k)
	if err != nil {
		return err
	}
	if taken == 0 {
		return nil
	}
	for count > 0 {
		n, cut := splitRecords(merged, min(count, blockMaxRows))
		if n == 0 {
			return internal(errCorruptDims)
		}
		if err := w.insertNumberedBlock(k, n, merged[:cut]); err != nil {
			return err
		}
		merged, count = merged[cut:], count-n
	}
	return nil
}

// takeSmallBlocks deletes up to compactMaxBlocks of the day's small
// blocks no other transaction holds and returns their rows, joined.
func (w *writer) takeSmallBlocks(k blockKey) (merged []byte, count, taken int, err error) {
	rows, err := w.tx.QueryContext(w.ctx, `DELETE FROM dims_blocks d USING (
			SELECT cat, day, block FROM dims_blocks WHERE cat = $1 AND day = $2 AND row_count < $3
			ORDER BY block LIMIT $4 FOR UPDATE SKIP LOCKED) small
		WHERE d.cat = small.cat AND d.day = small.day AND d.block = small.block
		RETURNING d.row_count, d.data`, k.cat, k.day, blockMaxRows, compactMaxBlocks)
	if err != nil {
		return nil, 0, 0, internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			n    int
			data sql.RawBytes
		)
		if err := rows.Scan(&n, &data); err != nil {
			return nil, 0, 0, internal(err)
		}
		merged = append(merged, data...)
		count += n
		taken++
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, internal(err)
	}
	return merged, count, taken, nil
}
