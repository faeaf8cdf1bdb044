package sqlstore

import (
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
)

// On PostgreSQL a write of at most one batch within WriteTx (AppendTx: a
// chat turn's interaction) inserts its raw rows, their new code blocks
// and the rollup counts in one statement, the blocks and the rollups as
// data-modifying WITH queries of the rows' insert. Every statement costs a
// round trip and the server's own work per statement, and a chat turn's
// write transaction is a handful of small statements (docs/benchmarks.md,
// section 25).

// writeTurn writes batch, at most one full batch, with its blocks and
// rollups in one statement (PostgreSQL).
func (w *writer) writeTurn(batch []analytics.Interaction) error {
	batch, dims, err := w.stage(batch)
	if err != nil || len(batch) == 0 {
		return err
	}
	blocks, compact := w.newBlocks()
	keys := w.rollupKeys()
	// The rows' values first, so that their insert is numbered as
	// anywhere else; then the blocks', then the rollups'.
	args := w.appendRawArgs(w.args[:0], batch, dims)
	blocksFrom := len(args) + 1
	for _, b := range blocks {
		args = append(args, b.key.cat, b.key.day, b.rows, b.data)
	}
	rollupsFrom := len(args) + 1
	for _, k := range keys {
		args = appendRollupArgs(args, k, w.rollups[k])
	}
	w.args = args
	query := func() string {
		var with []string
		if len(blocks) > 0 {
			with = append(with, "blocks AS (INSERT INTO dims_blocks (cat, day, block, row_count, data) VALUES "+
				numberedBlocks(blocksFrom, len(blocks))+")")
		}
		if len(keys) > 0 {
			with = append(with, "rollups AS ("+rollupUpsert(w.dialect, rollupsFrom, len(keys))+")")
		}
		q := rawInsert(w.dialect, len(batch))
		if len(with) > 0 {
			q = "WITH " + strings.Join(with, ", ") + " " + q
		}
		return q
	}
	if err := w.insertRows(batch, stmtKey{}, query, args); err != nil {
		return err
	}
	// The merges after the insert, so that they take the turn's own
	// small block too. The turn then holds its rollup rows through the
	// merge, one turn in compactEvery; they are shards of the rows, which
	// other connections' turns do not lock (rollupShards).
	for _, k := range compact {
		if err := w.compactBlocks(k); err != nil {
			return err
		}
	}
	w.clearBlocks()
	clear(w.rollups)
	return nil
}
