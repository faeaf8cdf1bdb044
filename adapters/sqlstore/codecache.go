package sqlstore

import (
	"crypto/sha256"
	"sync"
)

// An Append reads the code of every dictionary entry of a batch that the
// batch does not add: one look-up per dictionary and batch, although a
// log's topics, models, personas and most of its questions and answers
// come back batch after batch. The store keeps the codes that committed
// Appends used (codeCache), so a batch reads only the entries it has not
// seen before.
//
// A code stays valid until a deletion's garbage collection deletes its
// entry (deletegc.go), which can happen in another process sharing the
// database. Every collection adds one to a counter in the database
// (dictionary_collections) in its own transaction, and every Append reads
// that counter in its transaction before it codes a row: the cached codes
// are used only while the counter is what it was when they were cached.
// A WriteTx transaction reads it as it begins (beginWrite, on PostgreSQL)
// and its AppendTx calls use it; the codes they learn are cached once
// WriteTx has committed (Store.settled), never for an attempt that failed.
// No collection can commit during the Append's transaction (on SQLite it
// is the only writer; on PostgreSQL the collection's lock on the
// interactions conflicts with the Append's, see excludeWriters), so a
// code the Append takes from the cache has an entry until it commits.
// Codes learned by an Append, entries it added included, are cached only
// once it has committed.

// maxCachedCodes bounds the codes the cache holds (about 60 bytes each):
// when full it is emptied and fills again from the next Appends.
const maxCachedCodes = 1 << 17

// cachedEntry identifies a dictionary entry: its dictionary and digest.
type cachedEntry struct {
	table  uint8
	digest [sha256.Size]byte
}

// learnedCode is an entry's code, as an Append learned it.
type learnedCode struct {
	entry cachedEntry
	code  int64
}

// codeCache holds the codes of dictionary entries, valid while the
// database's collections counter is collections.
type codeCache struct {
	mu          sync.Mutex
	collections int64
	codes       map[cachedEntry]int64
}

// lookup gives each of the numbered entries the cache holds its code
// (e.codes), when collections is the counter the cache was filled at; it
// returns the numbers still without a code, in order, reusing numbers.
func (c *codeCache) lookup(collections int64, e *entries, numbers []int32) []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.codes == nil || c.collections != collections {
		return numbers
	}
	out := numbers[:0]
	for _, n := range numbers {
		if code, ok := c.codes[e.cacheKey(n)]; ok {
			e.codes[n] = code
			continue
		}
		out = append(out, n)
	}
	return out
}

// learn caches the codes a committed Append learned at the counter
// collections. Codes of an older counter than the cache's are dropped; a
// newer counter empties the cache first.
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
		c.codes = make(map[cachedEntry]int64, len(learned))
		c.collections = collections
	}
	for _, l := range learned {
		c.codes[l.entry] = l.code
	}
}

// collectionsTable counts the garbage collections of dictionary entries
// (one row): see above.
func collectionsTable() []string {
	return []string{
		`CREATE TABLE dictionary_collections (id INTEGER PRIMARY KEY, collections BIGINT NOT NULL)`,
		`INSERT INTO dictionary_collections (id, collections) VALUES (1, 0)`,
	}
}

// readCollections is the query of the collections counter.
const readCollections = "SELECT collections FROM dictionary_collections WHERE id = 1"

// countCollection is the statement a garbage collection adds itself to
// the counter with.
const countCollection = "UPDATE dictionary_collections SET collections = collections + 1 WHERE id = 1"
