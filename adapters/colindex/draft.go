package colindex

import (
	"hash/maphash"

	"github.com/catsrv/catsrv/core/analytics"
)

// A refresh makes the rows of one read visible all at once: a transaction
// another process committed (an import, a chat turn) is counted whole or
// not at all. It reads them without the write lock into a batch: a new
// CAT is built aside in full; the rows of a CAT readers are using are
// coded against its dictionaries into a catDraft, their new values kept
// aside in dictDrafts (their bytes already where the dictionary will
// read them, see dictDraft). One hold of the write lock then merges the
// new values, puts the coded rows in their columns, posting lists,
// running totals and cube, and installs the new CATs.

// batch is the rows of one refresh until they are applied.
type batch struct {
	cats map[string]*catDraft
	rows int
	high int64 // the feed position after the rows read
	// given are the ids of rows read that the index already held (see
	// Index.given): forgotten once the batch applies.
	given []int64
	// ratings is set when the rows' ratings count (see ratings.go): the
	// rated rows also go to their CAT's rated indexes, drafted in rated
	// (indexed by RatingCode-1).
	ratings bool
	rated   [2]map[string]*catDraft
	// newRated replaces the rated indexes of CATs whose ratings changed,
	// built aside from the source (their drafts in rated are dropped).
	newRated map[string][2]*catIndex
}

// catDraft is a batch's rows of one CAT. For a CAT new to the index, c is
// a catIndex no reader sees yet, and the rows go straight into it.
// Otherwise they are coded against c and kept in rows; their new values
// and combinations wait in dicts, combos and comboOf.
type catDraft struct {
	c       *catIndex
	fresh   bool
	dicts   [dimensions]dictDraft
	combos  [][3]uint32          // new combinations, coded after c's
	comboOf map[[3]uint32]uint32 // their codes
	rows    []codedRow
	// bySource is, for a new CAT, each dimension's codes by the source's
	// code (analytics.FeedRow.Codes), plus one: a value the source codes is
	// looked up in the dictionary once per read, not once per row.
	bySource [dimensions][]uint32
}

// maxSourceCode bounds the source codes remembered in bySource (a table
// by code); rows with larger ones are coded by their texts.
const maxSourceCode = 1 << 24

// addFresh adds a row to a new CAT, coding each value the source coded
// only the first time it comes.
func (cd *catDraft) addFresh(r *analytics.FeedRow, use rowUsage) {
	if r.Codes == [dimensions]uint64{} {
		codes := cd.c.code(r)
		cd.c.addCoded(r.Micros, &codes, use)
		return
	}
	keys := [dimensions][]byte{r.Topic, r.Model, r.Persona, r.QuestionID, r.AnswerID}
	texts := [dimensions][]byte{r.Topic, r.Model, r.Persona, r.Question, r.Answer}
	var codes [dimensions]uint32
	for d, src := range r.Codes {
		by := cd.bySource[d]
		if src > 0 && src < uint64(len(by)) && by[src] != 0 {
			codes[d] = by[src] - 1
			continue
		}
		codes[d] = cd.c.dicts[d].code(keys[d], texts[d])
		if src > 0 && src < maxSourceCode {
			if src >= uint64(len(by)) {
				by = append(by, make([]uint32, int(src)+1-len(by))...)
				by = by[:cap(by)]
				cd.bySource[d] = by
			}
			by[src] = codes[d] + 1
		}
	}
	cd.c.addCoded(r.Micros, &codes, use)
}

// add reads one row into the batch; cats are the index's CATs.
func (b *batch) add(cats map[string]*catIndex, r *analytics.FeedRow) {
	cd := b.cats[string(r.Cat)]
	if cd == nil {
		cd = newCatDraft(cats[string(r.Cat)], r.CatRows)
		b.cats[string(r.Cat)] = cd
	}
	b.rows++
	cd.add(r, usageOf(r))
	if b.ratings {
		b.addRated(cats, r)
	}
}

// addRated reads a row into its CAT's rated index of its rating, if it
// has one.
func (b *batch) addRated(cats map[string]*catIndex, r *analytics.FeedRow) {
	if r.Rating != analytics.RatingCodeUp && r.Rating != analytics.RatingCodeDown {
		return
	}
	k := r.Rating - 1
	if b.rated[k] == nil {
		b.rated[k] = map[string]*catDraft{}
	}
	cd := b.rated[k][string(r.Cat)]
	if cd == nil {
		var on *catIndex
		if c := cats[string(r.Cat)]; c != nil {
			on = c.rated[k]
		}
		cd = newRatedDraft(on)
		b.rated[k][string(r.Cat)] = cd
	}
	addRatedRow(cd, r)
}

// newRatedDraft begins a draft of rows for the rated index c, or for a
// new one (c nil). Only a new one is marked: c may be read meanwhile.
func newRatedDraft(c *catIndex) *catDraft {
	cd := newCatDraft(c, 0)
	if c == nil {
		cd.c.noCube = true
	}
	return cd
}

// addRatedRow adds a row to a rated index's draft: without its usage and
// its question and answer texts (a rated index counts rows, it lists no
// texts), so that its dictionaries hold only keys.
func addRatedRow(cd *catDraft, r *analytics.FeedRow) {
	keys := *r
	keys.Question, keys.Answer = r.QuestionID, r.AnswerID
	cd.add(&keys, rowUsage{})
}

// newCatDraft begins a draft of rows for c, or for a new CAT (c nil) of
// about rows rows (0 when unknown).
func newCatDraft(c *catIndex, rows int) *catDraft {
	cd := &catDraft{c: c}
	if cd.c == nil {
		cd.c, cd.fresh = newCatIndex(), true
		cd.c.buildPostings = true
		if rows > 0 {
			cd.c.reserve(rows)
		}
		return cd
	}
	for d := range cd.dicts {
		cd.dicts[d] = newDictDraft(&cd.c.dicts[d])
	}
	return cd
}

// add reads one row into the draft.
func (cd *catDraft) add(r *analytics.FeedRow, use rowUsage) {
	if cd.fresh {
		cd.addFresh(r, use)
		return
	}
	combo := [3]uint32{
		cd.dicts[analytics.Topic].code(r.Topic, r.Topic),
		cd.dicts[analytics.Model].code(r.Model, r.Model),
		cd.dicts[analytics.Persona].code(r.Persona, r.Persona),
	}
	comboCode, ok := cd.c.comboOf[combo]
	if !ok {
		if comboCode, ok = cd.comboOf[combo]; !ok {
			comboCode = uint32(len(cd.c.combos) + len(cd.combos)) // #nosec G115 -- fewer than 2^32 combinations
			if cd.comboOf == nil {
				cd.comboOf = map[[3]uint32]uint32{}
			}
			cd.comboOf[combo] = comboCode
			cd.combos = append(cd.combos, combo)
		}
	}
	cd.rows = append(cd.rows, codedRow{micros: r.Micros, combo: comboCode,
		question: cd.dicts[analytics.Question].code(r.QuestionID, r.Question),
		answer:   cd.dicts[analytics.Answer].code(r.AnswerID, r.Answer), use: use})
}

// prepare does, before the write lock, what readers cannot see: it ranks
// and sorts the new CATs and grows the hash tables the drafts will need.
func (b *batch) prepare() {
	for _, cd := range b.cats {
		cd.prepare()
	}
	for _, m := range b.rated {
		for _, cd := range m {
			cd.prepare()
		}
	}
}

func (cd *catDraft) prepare() {
	if cd.fresh {
		cd.c.finishFresh()
		return
	}
	for d := range cd.dicts {
		cd.dicts[d].prepare()
	}
}

// apply makes the batch's rows visible: the caller holds the write lock.
func (b *batch) apply(cats map[string]*catIndex) {
	for name, cd := range b.cats {
		if cd.fresh {
			cats[name] = cd.c
			continue
		}
		cd.merge()
	}
	for k, m := range b.rated {
		for name, cd := range m {
			c := cats[name]
			if _, ok := b.newRated[name]; ok || c == nil {
				continue
			}
			if cd.fresh {
				c.rated[k] = cd.c
				continue
			}
			cd.merge()
		}
	}
	for name, rated := range b.newRated {
		if c := cats[name]; c != nil {
			c.rated = rated
		}
	}
}

// merge puts the draft's rows in its CAT, under the write lock.
func (cd *catDraft) merge() {
	for d := range cd.dicts {
		cd.dicts[d].merge()
	}
	for _, combo := range cd.combos {
		cd.c.newCombo(combo)
	}
	for _, r := range cd.rows {
		cd.c.put(r)
	}
}

// dictDraft is the pairs a refresh adds to a dictionary readers are
// using, coded after the dictionary's own. Until merge adds them under
// the write lock they are kept aside: their entries and hash table in
// add, their bytes where no reader looks, past the end of the
// dictionary's last chunk (in its spare capacity) and in new chunks, so
// that merge only lengthens the last chunk and adopts the others.
type dictDraft struct {
	to   *dictionary
	base uint32 // to.len() when the draft began: add's code 0
	// tail is the length of to's last chunk when the draft began; add's
	// first chunk is that chunk's spare capacity (when to has chunks).
	tail   int
	tailed bool // add's first chunk is the rest of to's last
	add    dictionary
	keys   []draftKey // the first pair of each key new to add
	// slots is to's hash table grown for the new pairs, when it must grow
	// (see prepare).
	slots []uint32
}

// draftKey is the first pair of a key in a draft: its hash, its code in
// the draft, and to's last code of the key (noCode when to has none).
type draftKey struct {
	hash       uint64
	code, last uint32
}

func newDictDraft(to *dictionary) dictDraft {
	dd := dictDraft{to: to, base: uint32(to.len()), // #nosec G115 -- fewer than 2^32 distinct values
		add: dictionary{seed: to.seed, chunkCap: to.chunkCap}}
	if n := len(to.chunks); n > 0 {
		last := to.chunks[n-1]
		dd.tail, dd.tailed = len(last), true
		dd.add.chunks = [][]byte{last[len(last):]}
	}
	return dd
}

// code returns the pair's code, the dictionary's or, for a new pair, the
// draft's (after the dictionary's).
func (dd *dictDraft) code(key, text []byte) uint32 {
	hash := maphash.Bytes(dd.to.seed, key)
	c, last := dd.to.lookup(hash, key, text)
	if c != noCode {
		return c
	}
	c, addLast := dd.add.lookup(hash, key, text)
	if c == noCode {
		c = dd.add.add(hash, key, text, addLast)
		if addLast == noCode {
			dd.keys = append(dd.keys, draftKey{hash: hash, code: c, last: last})
		}
	}
	return dd.base + c
}

// prepare builds, before the write lock, the hash table the dictionary
// needs for its new keys when its own would get more than 3/4 full.
func (dd *dictDraft) prepare() {
	d := dd.to
	total := d.len() + dd.add.len()
	if dd.add.len() == 0 || 4*total <= 3*len(d.slots) {
		return
	}
	size := max(64, len(d.slots))
	for 4*total > 3*size {
		size *= 2
	}
	dd.slots = make([]uint32, size)
	for _, s := range d.slots {
		if s != 0 {
			putSlot(dd.slots, maphash.String(d.seed, d.key(s-1)), s-1)
		}
	}
	for _, k := range dd.keys {
		if k.last == noCode {
			putSlot(dd.slots, k.hash, dd.base+k.code)
		}
	}
}

// merge adds the draft's pairs to the dictionary, under the write lock.
func (dd *dictDraft) merge() {
	d, add := dd.to, &dd.add
	if add.len() == 0 {
		return
	}
	// add's chunk k is d's chunk first+k; when tailed, add's first chunk
	// is the rest of d's last.
	first := uint32(len(d.chunks)) // #nosec G115 -- few chunks
	chunks := add.chunks
	if dd.tailed {
		first--
		d.chunks[first] = d.chunks[first][:dd.tail+len(chunks[0])]
		chunks = chunks[1:]
	}
	d.chunks = append(d.chunks, chunks...)
	d.chunkCap = add.chunkCap
	for _, e := range add.entries {
		if dd.tailed && e.chunk == 0 {
			e.off += uint32(dd.tail) // #nosec G115 -- chunks are far below 4 GiB
		}
		e.chunk += first
		d.entries = append(d.entries, e)
	}
	for _, next := range add.sameKey {
		if next != noCode {
			next += dd.base
		}
		d.sameKey = append(d.sameKey, next)
	}
	if dd.slots != nil {
		d.slots = dd.slots
	}
	for _, k := range dd.keys {
		switch {
		case k.last != noCode:
			d.sameKey[k.last] = dd.base + k.code
		case dd.slots == nil:
			putSlot(d.slots, k.hash, dd.base+k.code)
		}
	}
}
