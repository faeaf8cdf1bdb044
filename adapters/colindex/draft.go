package colindex

import (
	"hash/maphash"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
)

// A refresh makes the rows of one read visible all at once: a transaction
// another process committed (an import, a chat turn) is counted whole or
// not at all. It reads them without the write lock into a batch: a new
// CAT is built aside in full; the rows of a CAT readers are using are
// coded against its dictionaries into a catDraft, their new values kept
// aside in dictDrafts (their bytes already where the dictionary will
// read them, see dictDraft). For a few rows, one hold of the write lock
// then merges the new values, puts the coded rows in their columns, posting
// lists, running totals and cube (about a third of a microsecond a row),
// and installs the new CATs. For bulkRows rows or more of a CAT, or rows
// that would move more rows than the CAT has when put in one at a time
// (late rows, see lateMoves), the CAT's next columns, posting lists and
// totals are built beside the ones readers use (see prepareBulk), leaving
// the lock the new values, the cube's new cells and a swap.

// bulkRows is the fewest rows of a CAT in one refresh that are applied
// by building its next rows beside the ones readers use. Fewer rows are
// applied so too when most are late, older than the CAT's newest, and
// inserting them one at a time would move more rows than the CAT has
// (lateMoves): an HTTP batch of a day's log, say.
const bulkRows = 4096

// batch is the rows of one refresh until they are applied.
type batch struct {
	cats map[string]*catDraft
	rows int
	high int64 // the feed position after the rows read
	// given are the ids of rows read that the index already held (see
	// Index.given): forgotten once the batch applies.
	given []int64
	// put, when set, puts the coded rows of new CATs on a goroutine of
	// its own (see putter); it must be waited for before prepare.
	put *putter
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
	bulk    *bulk // the CAT's next rows, for bulkRows rows or more
	// bySource is, for a new CAT, each dimension's codes by the source's
	// code (analytics.FeedRow.Codes), plus one: a value the source codes is
	// looked up in the dictionary once per read, not once per row.
	bySource [dimensions][]uint32
}

// maxSourceCode bounds the source codes remembered in bySource (a table
// by code); rows with larger ones are coded by their texts.
const maxSourceCode = 1 << 24

// addFresh adds a row to a new CAT, coding each value the source coded
// only the first time it comes; through put when it is set.
func (cd *catDraft) addFresh(r *analytics.FeedRow, put *putter) {
	if r.Codes == [dimensions]uint64{} {
		if put == nil {
			cd.c.add(r)
			return
		}
		codes := cd.c.code(r)
		put.add(cd.c, r.Micros, &codes)
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
	if put != nil {
		put.add(cd.c, r.Micros, &codes)
		return
	}
	cd.c.addCoded(r.Micros, &codes)
}

// bulk is a CAT's rows, totals and the new rows' cube cells after a large
// batch, built without the write lock.
type bulk struct {
	rows   catRows
	totals [dimensions][]int64
	heavy  [len(postingDims)]heavyCodes
	cube   cube // the batch's rows only
}

// combo returns the topic, model and persona codes of a combination.
func (cd *catDraft) combo(code uint32) [3]uint32 {
	if n := uint32(len(cd.c.combos)); code >= n { // #nosec G115 -- fewer than 2^32 combinations
		return cd.combos[code-n]
	}
	return cd.c.combos[code]
}

// prepareBulk builds the CAT's rows with the batch's: the columns are
// lengthened past their ends (or copied when full), where no reader
// looks; the posting lists' tables are copied and lengthened likewise
// when every new row is newer than the CAT's rows, else rebuilt after
// the rows are sorted into new storage, the CAT's merged with the new.
func (cd *catDraft) prepareBulk() {
	c := cd.c
	b := &bulk{rows: c.catRows}
	for d := range b.totals {
		b.totals[d] = make([]int64, cd.dicts[d].to.len()+cd.dicts[d].add.len())
		copy(b.totals[d], c.totals[d])
	}
	next, n := &b.rows, c.at.len()
	inOrder := next.sorted
	if inOrder && n > 0 {
		last := c.at.last()
		for _, r := range cd.rows {
			if r.micros < last {
				inOrder = false
				break
			}
			last = r.micros
		}
	}
	if inOrder {
		for k := range next.postings {
			next.postings[k].ref = slices.Clone(next.postings[k].ref)
			next.postings[k].lists = slices.Clone(next.postings[k].lists)
		}
	} else if next.sorted {
		next.sorted, next.inOrder = false, n
	}
	for k, r := range cd.rows {
		at := n + k
		next.at.insert(at, r.micros)
		next.combo.insert(at, r.combo)
		next.question.insert(at, r.question)
		next.answer.insert(at, r.answer)
		combo := cd.combo(r.combo)
		var codes [dimensions]uint32
		codes[analytics.Topic], codes[analytics.Model], codes[analytics.Persona] = combo[0], combo[1], combo[2]
		codes[analytics.Question], codes[analytics.Answer] = r.question, r.answer
		for d, code := range codes {
			b.totals[d][code]++
		}
		if inOrder {
			for p, d := range postingDims {
				next.postings[p].insert(codes[d], at)
			}
		}
		b.cube.add(r.micros, r.combo)
	}
	next.sortByTime(&b.totals)
	for k, d := range postingDims {
		b.heavy[k] = heavyOf(b.totals[d])
	}
	cd.bulk = b
}

// lateMoves estimates how many of the CAT's rows putting the draft's rows
// in one at a time would move (catIndex.put): each row older than the
// CAT's newest is inserted at its place, moving the later rows of every
// column and shifting their postings. It stops counting past the CAT's
// size: more moves than that cost more than appending the rows and
// sorting once, beside the rows readers use (prepareBulk), which is then
// what the batch does. A CAT whose rows are not in time order is left to
// put and sortUnsorted.
func (cd *catDraft) lateMoves() int {
	c := cd.c
	n := c.at.len()
	if n == 0 || !c.sorted {
		return 0
	}
	last, moves := c.at.last(), 0
	for _, r := range cd.rows {
		if r.micros >= last {
			continue
		}
		if moves += n - c.at.search(r.micros+1); moves > n {
			break
		}
	}
	return moves
}

// add reads one row into the batch; cats are the index's CATs.
func (b *batch) add(cats map[string]*catIndex, r *analytics.FeedRow) {
	cd := b.cats[string(r.Cat)]
	if cd == nil {
		cd = &catDraft{c: cats[string(r.Cat)]}
		if cd.c == nil {
			cd.c, cd.fresh = newCatIndex(), true
			cd.c.buildPostings = true
			if r.CatRows > 0 {
				cd.c.reserve(r.CatRows)
			}
		} else {
			for d := range cd.dicts {
				cd.dicts[d] = newDictDraft(&cd.c.dicts[d])
			}
		}
		b.cats[string(r.Cat)] = cd
	}
	b.rows++
	if cd.fresh {
		cd.addFresh(r, b.put)
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
		answer:   cd.dicts[analytics.Answer].code(r.AnswerID, r.Answer)})
}

// prepare does, before the write lock, what readers cannot see: it ranks
// and sorts the new CATs, grows the hash tables the drafts will need and
// builds the next rows of the CATs that receive bulkRows rows or more.
func (b *batch) prepare() {
	for _, cd := range b.cats {
		if cd.fresh {
			cd.c.finishFresh()
			continue
		}
		for d := range cd.dicts {
			cd.dicts[d].prepare()
		}
		if len(cd.rows) >= bulkRows || cd.lateMoves() > cd.c.at.len() {
			cd.prepareBulk()
		}
	}
}

// apply makes the batch's rows visible: the caller holds the write lock.
func (b *batch) apply(cats map[string]*catIndex) {
	for name, cd := range b.cats {
		if cd.fresh {
			cats[name] = cd.c
			continue
		}
		for d := range cd.dicts {
			cd.dicts[d].merge()
		}
		for _, combo := range cd.combos {
			cd.c.newCombo(combo)
		}
		if b := cd.bulk; b != nil {
			cd.c.catRows, cd.c.totals, cd.c.heavy = b.rows, b.totals, b.heavy
			cd.c.cube.merge(&b.cube)
			continue
		}
		for _, r := range cd.rows {
			cd.c.put(r)
		}
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
