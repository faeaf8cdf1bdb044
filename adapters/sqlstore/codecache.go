package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// Two caches make a batch's write cost its rows, not its statements: a
// log's topics, models, personas and most of its questions and answers
// come back batch after batch, and on SQLite the insert of a full batch is
// a statement of 14,000 parameters. The ingestion figure of `make bench`
// (docs/benchmarks.md) measures what they earn.

// codeCache holds the codes of dictionary entries that committed writes
// used, so a write looks up in the database only the entries it has not
// seen. A code stays valid until a garbage collection of the dictionaries
// (deletegc.go) deletes its entry, possibly in another process: every
// collection adds one to dictionary_collections in its transaction, and a
// writer reads that counter in its own before it takes a code from the
// cache. No collection commits during a write's transaction (SQLite has
// one writer; on PostgreSQL the collection's lock excludes writers), and
// codes are learned only once their write has committed.
type codeCache struct {
	mu          sync.Mutex
	collections int64
	codes       map[entryKey]int64
}

// maxCachedCodes bounds the cache (about 60 bytes a code); when full it
// is emptied and fills again.
const maxCachedCodes = 1 << 17

// learnedCode is an entry's code as a write learned it.
type learnedCode struct {
	key  entryKey
	code int64
}

// fill gives the numbered entries the cache holds their codes when the
// cache was filled at counter collections, and returns the others.
func (c *codeCache) fill(collections int64, e *entries, numbers []int32) []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.codes == nil || c.collections != collections {
		return numbers
	}
	var out []int32
	for _, n := range numbers {
		if code, ok := c.codes[e.fresh[n-e.freshBase].key]; ok {
			e.codes[n] = code
			continue
		}
		out = append(out, n)
	}
	return out
}

// learn caches the codes a committed write learned at counter
// collections: an older counter's are dropped, a newer one empties the
// cache first.
func (c *codeCache) learn(collections int64, learned []learnedCode) {
	if len(learned) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.codes != nil && collections < c.collections:
		return
	case c.codes == nil || collections > c.collections || len(c.codes)+len(learned) > maxCachedCodes:
		c.codes = make(map[entryKey]int64, len(learned))
		c.collections = collections
	}
	for _, l := range learned {
		c.codes[l.key] = l.code
	}
}

// readCollections reads the collections counter in the write's
// transaction.
const readCollections = "SELECT collections FROM dictionary_collections WHERE id = 1"

// batchStmt is the SQLite insert of a full batch of raw rows, prepared on
// the pool: database/sql prepares it once on each connection it runs on
// and a transaction's Tx.StmtContext reuses that connection's. Values are
// bound, never written into the text.
type batchStmt struct {
	mu     sync.Mutex
	stmt   *sql.Stmt
	closed bool
}

// in returns the statement for tx, preparing it on db the first time.
func (b *batchStmt) in(ctx context.Context, db *sql.DB, tx *sql.Tx, query func() string) (*sql.Stmt, error) {
	b.mu.Lock()
	if b.stmt == nil && !b.closed {
		stmt, err := db.PrepareContext(ctx, query())
		if err != nil {
			b.mu.Unlock()
			return nil, internal(err)
		}
		b.stmt = stmt
	}
	stmt := b.stmt
	b.mu.Unlock()
	if stmt == nil {
		return nil, internal(sql.ErrConnDone)
	}
	return tx.StmtContext(ctx, stmt), nil // closed with tx
}

func (b *batchStmt) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stmt != nil {
		_ = b.stmt.Close()
	}
	b.stmt, b.closed = nil, true
}
