package sqlstore

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
)

// dictEntry is one distinct value of a dimension within a CAT. For topic,
// model and persona the id is the name, as is the text.
type dictEntry struct {
	table    int // index into dictionaryTables
	cat      string
	id, text string
}

// digest identifies an entry in its dictionary. Fields cannot hold NUL
// bytes (Interaction.Validate), so the NUL-joined input is unambiguous.
func (e dictEntry) digest() []byte {
	sum := sha256.Sum256(e.appendDigested(nil))
	return sum[:]
}

// appendDigested appends to b what the entry's digest is taken of: its
// CAT, id and text, each ended by a zero byte but the last.
func (e dictEntry) appendDigested(b []byte) []byte {
	b = append(b, e.cat...)
	b = append(b, 0)
	b = append(b, e.id...)
	b = append(b, 0)
	return append(b, e.text...)
}

// entriesOf returns the dictionary entries of an interaction, in
// dictionaryTables order.
func entriesOf(i analytics.Interaction) [5]dictEntry {
	return [5]dictEntry{
		{0, i.Cat, i.Topic, i.Topic},
		{1, i.Cat, i.Model, i.Model},
		{2, i.Cat, i.Persona, i.Persona},
		{3, i.Cat, i.QuestionID, i.Question},
		{4, i.Cat, i.AnswerID, i.Answer},
	}
}

// entries numbers the distinct dictionary entries of one Append and holds
// their database codes once known (0 until then, listed in pending).
//
// An entry is known by its dictionary and digest (entryKey), as the
// dictionaries know it; only the entries that may still lack a code keep
// their texts (fresh), so the index holds no pointers for the garbage
// collector to scan.
type entries struct {
	index   map[entryKey]int32
	codes   []int64
	pending []int32
	// fresh holds the entries numbered from freshBase on, those that may
	// still lack a code, with their keys: their texts go into the
	// dictionaries. settle forgets them once they all have one.
	fresh     []freshEntry
	freshBase int32
	// buf is key's scratch.
	buf []byte
}

// entryKey identifies a dictionary entry: its dictionary and digest.
type entryKey struct {
	table  uint8
	digest [sha256.Size]byte
}

// freshEntry is an entry that may still lack a code, and its key.
type freshEntry struct {
	entry dictEntry
	key   entryKey
}

// digest returns entry n's digest; n has no code yet.
func (e *entries) digest(n int32) []byte { return e.fresh[n-e.freshBase].key.digest[:] }

// text returns entry n, one that has no code yet.
func (e *entries) text(n int32) dictEntry { return e.fresh[n-e.freshBase].entry }

// table returns entry n's dictionary; n has no code yet.
func (e *entries) table(n int32) int { return e.fresh[n-e.freshBase].entry.table }

func newEntries() *entries { return &entries{index: map[entryKey]int32{}} }

func (e *entries) number(d dictEntry) int32 {
	k := e.key(d)
	n, ok := e.index[k]
	if !ok {
		n = int32(len(e.codes)) // #nosec G115 -- bounded by maxEntries per batch round
		e.index[k] = n
		e.codes = append(e.codes, 0)
		e.fresh = append(e.fresh, freshEntry{entry: d, key: k})
		e.pending = append(e.pending, n)
	}
	return n
}

// key is d's dictionary and digest (dictEntry.digest, in a reused
// buffer).
func (e *entries) key(d dictEntry) entryKey {
	e.buf = d.appendDigested(e.buf[:0])
	return entryKey{table: uint8(d.table), digest: sha256.Sum256(e.buf)} // #nosec G115 -- five dictionaries
}

// settle forgets the texts and keys of the entries numbered so far: every
// one has its code (resolveCodes succeeded).
func (e *entries) settle() {
	clear(e.fresh)
	e.fresh = e.fresh[:0]
	e.freshBase = int32(len(e.codes)) // #nosec G115 -- bounded by maxEntries per batch round
}

// maxEntries bounds the numbered entries an Append remembers, so a hostile
// input of endless distinct texts cannot exhaust memory.
const maxEntries = 200000

// resetIfLarge forgets every entry once there are more than maxEntries;
// only valid between batches (a batch's rows refer to theirs).
func (e *entries) resetIfLarge() {
	if len(e.codes) <= maxEntries {
		return
	}
	clear(e.index)
	e.codes, e.pending = e.codes[:0], e.pending[:0]
	clear(e.fresh)
	e.fresh, e.freshBase = e.fresh[:0], 0
}

// resolveCodes finds the database code of every entry that has none yet,
// inserting the entries the dictionaries lack.
func (w *writer) resolveCodes() error {
	if len(w.entries.pending) == 0 {
		return nil
	}
	pending, err := w.cachedCodes(w.entries.pending)
	if err != nil {
		return err
	}
	missing := make([][]int32, len(dictionaryTables))
	for _, n := range pending {
		table := w.entries.table(n)
		missing[table] = append(missing[table], n)
	}
	w.entries.pending = w.entries.pending[:0]
	uncoded := func(numbers []int32) []int32 {
		var out []int32
		for _, n := range numbers {
			if w.entries.codes[n] == 0 {
				out = append(out, n)
			}
		}
		return out
	}
	// Read first: a log's texts repeat, so most entries of a batch are in
	// the dictionary already, and one read costs less than an insert that
	// skips them. On PostgreSQL one statement reads all five dictionaries
	// (lookupCodes); SQLite reads each, in-process. Then insert those
	// still lacking, and read the codes of any a concurrent writer
	// inserted meanwhile.
	if w.dialect == postgresDialect {
		if err := w.lookupCodes(missing); err != nil {
			return err
		}
	}
	for table, numbers := range missing {
		if w.dialect != postgresDialect {
			if err := w.loadCodes(table, numbers); err != nil {
				return err
			}
		}
		lacking := uncoded(numbers)
		if len(lacking) == 0 {
			continue
		}
		if err := w.insertEntries(table, lacking); err != nil {
			return err
		}
		if err := w.loadCodes(table, uncoded(lacking)); err != nil {
			return err
		}
		for _, n := range numbers {
			if w.entries.codes[n] == 0 {
				return internal(fmt.Errorf("%s: no code for an entry just inserted", dictionaryTables[table]))
			}
		}
	}
	if w.store != nil && len(w.learned)+len(pending) <= maxCachedCodes {
		for _, n := range pending {
			w.learned = append(w.learned, learnedCode{w.entries.fresh[n-w.entries.freshBase].key, w.entries.codes[n]})
		}
	}
	w.entries.settle()
	return nil
}

// cachedCodes gives the numbered entries the store's code cache holds
// their codes and returns the others (all of them without a store).
func (w *writer) cachedCodes(numbers []int32) ([]int32, error) {
	if w.store == nil {
		return numbers, nil
	}
	if !w.collectionsRead {
		if err := w.tx.QueryRowContext(w.ctx, readCollections).Scan(&w.collections); err != nil {
			return nil, internal(err)
		}
		w.collectionsRead = true
	}
	return w.store.codes.fill(w.collections, w.entries, numbers), nil
}

// lookupCodes reads, on PostgreSQL, the codes of the entries the
// dictionaries hold already in one statement for all five (a chat turn's
// entries mostly exist), instead of two per dictionary. One bound
// parameter per digest, so the text is prepared once per connection and
// PostgreSQL keeps a generic plan.
func (w *writer) lookupCodes(numbers [][]int32) error {
	total := 0
	for _, ns := range numbers {
		total += len(ns)
	}
	if total == 0 || total > postgresDialect.maxParams() {
		return nil // insertEntries and loadCodes find them, in chunks
	}
	var query strings.Builder
	args := make([]any, 0, total)
	// By dictionary and digest: two dictionaries may hold the same digest
	// (an empty topic and an empty persona of one CAT).
	type key struct {
		table  int
		digest string
	}
	byDigest := make(map[key]int32)
	for table, name := range dictionaryTables {
		if len(numbers[table]) == 0 {
			continue
		}
		first := len(args) + 1
		for _, n := range numbers[table] {
			d := w.entries.digest(n)
			byDigest[key{table, string(d)}] = n
			args = append(args, d)
		}
		if query.Len() > 0 {
			query.WriteString(" UNION ALL ")
		}
		// #nosec G202 -- the table name comes from a fixed list, the values are bound.
		query.WriteString("SELECT " + strconv.Itoa(table) + ", code, digest FROM " + name +
			" WHERE digest IN (" + postgresDialect.placeholders(first, len(numbers[table])) + ")")
	}
	rows, err := w.dict.QueryContext(w.ctx, query.String(), args...)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			table  int
			code   int64
			digest []byte
		)
		if err := rows.Scan(&table, &code, &digest); err != nil {
			return internal(err)
		}
		if n, ok := byDigest[key{table, string(digest)}]; ok {
			w.entries.codes[n] = code
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// insertEntries adds the entries to their dictionary and records the codes
// of those it added, skipping those that exist (committed by an earlier
// Append or written earlier in this one; loadCodes finds theirs).
func (w *writer) insertEntries(table int, numbers []int32) error {
	name := dictionaryTables[table]
	batch := batchRows(w.dialect, 4)
	// In digest order, the order of the unique index: concurrent
	// PostgreSQL writers adding the same entries wait for each other but
	// never deadlock.
	digests := make(map[int32][]byte, len(numbers))
	for _, n := range numbers {
		digests[n] = w.entries.digest(n)
	}
	numbers = slices.Clone(numbers)
	slices.SortFunc(numbers, func(a, b int32) int { return bytes.Compare(digests[a], digests[b]) })
	for len(numbers) > 0 {
		chunk := numbers[:min(batch, len(numbers))]
		numbers = numbers[len(chunk):]
		args := make([]any, 0, 4*len(chunk))
		byDigest := make(map[string]int32, len(chunk))
		for _, n := range chunk {
			e := w.entries.text(n)
			d := digests[n]
			byDigest[string(d)] = n
			args = append(args, e.cat, d, e.id, e.text)
		}
		// #nosec G202 -- the table name comes from a fixed list, the values are bound.
		query := "INSERT INTO " + name + " (cat, digest, item_id, item_text) VALUES " +
			w.dialect.valuesClause(len(chunk), 4) + " ON CONFLICT (digest) DO NOTHING RETURNING code, digest"
		if err := w.readCodes(query, args, byDigest); err != nil {
			return err
		}
	}
	return nil
}

// loadCodes reads the codes of the entries.
func (w *writer) loadCodes(table int, numbers []int32) error {
	batch := batchRows(w.dialect, 1)
	for len(numbers) > 0 {
		chunk := numbers[:min(batch, len(numbers))]
		numbers = numbers[len(chunk):]
		byDigest := make(map[string]int32, len(chunk))
		args := make([]any, 0, len(chunk))
		for _, n := range chunk {
			d := w.entries.digest(n)
			byDigest[string(d)] = n
			args = append(args, d)
		}
		// #nosec G202 -- the table name comes from a fixed map, the values are bound.
		query := "SELECT code, digest FROM " + dictionaryTables[table] + " WHERE digest IN (" +
			w.dialect.placeholders(1, len(chunk)) + ")"
		if err := w.readCodes(query, args, byDigest); err != nil {
			return err
		}
	}
	return nil
}

// readCodes runs a dictionary look-up and records the code of each digest.
func (w *writer) readCodes(query string, args []any, byDigest map[string]int32) error {
	rows, err := w.dict.QueryContext(w.ctx, query, args...)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var code int64
		var digest []byte
		if err := rows.Scan(&code, &digest); err != nil {
			return internal(err)
		}
		if n, ok := byDigest[string(digest)]; ok {
			w.entries.codes[n] = code
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}
