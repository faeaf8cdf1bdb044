package colindex

import (
	"sync"
	"sync/atomic"

	"github.com/catsrv/catsrv/core/analytics"
)

// A topic, model or persona filter over the whole CAT (such as two
// models and a persona) passes a large share of the rows, so its question
// and answer lists would read every row: 9M at 10M interactions, twice.
// Instead, the CAT keeps per question and per answer code its rows per
// combination over the whole CAT (comboLists): the list is then a sum over
// each code's few combinations. Only rows are added to a CAT (a deletion
// builds a new one), so its row count tells whether such tables are still
// those of its rows. They are built from the posting lists by a query,
// under the read lock, when two queries in a row saw the same row count:
// while rows keep arriving, queries count the rows as before.

// comboLists are a CAT's question and answer codes' rows per combination,
// for the CAT holding rows rows; indexed like postingDims.
type comboLists struct {
	rows int
	dims [len(postingDims)]comboCounts
}

// comboCounts are one dimension's codes' rows per combination: a code
// with a posting list (the r-th) has its combinations and row counts in
// pairs[start[r]:start[r+1]]; a code with one row is listed under its
// row's combination, in ones[oneStart[combo]:oneStart[combo+1]].
type comboCounts struct {
	listed   []uint32 // the code of each posting list
	start    []uint32
	pairs    []comboCount
	oneStart []uint32
	ones     []uint32
}

type comboCount struct {
	combo uint32
	n     int32
}

// comboCache holds a CAT's comboLists, if built, and what builds them.
type comboCache struct {
	lists atomic.Pointer[comboLists]
	// seen is the row count the last query that found no current lists
	// saw: the next query that sees the same count builds them.
	seen     atomic.Int64
	building sync.Mutex
}

// comboLists returns the CAT's current comboLists, building them if the
// previous query saw the same rows, or nil (count the rows instead). The
// caller holds the index's read lock.
func (c *catIndex) comboLists() *comboLists {
	rows := c.at.len()
	if l := c.byCombo.lists.Load(); l != nil && l.rows == rows {
		return l
	}
	if c.byCombo.seen.Swap(int64(rows)) != int64(rows) || !c.byCombo.building.TryLock() {
		return nil
	}
	defer c.byCombo.building.Unlock()
	if l := c.byCombo.lists.Load(); l != nil && l.rows == rows {
		return l
	}
	l := &comboLists{rows: rows}
	for k := range postingDims {
		l.dims[k] = c.countByCombo(k)
	}
	c.byCombo.lists.Store(l)
	return l
}

// countByCombo counts postingDims[k]'s codes' rows per combination from
// the posting lists.
func (c *catIndex) countByCombo(k int) comboCounts {
	pl := &c.postings[k]
	out := comboCounts{listed: make([]uint32, len(pl.lists)), start: make([]uint32, len(pl.lists)+1),
		oneStart: make([]uint32, len(c.combos)+1)}
	perCombo := make([]int32, len(c.combos))
	for code, r := range pl.ref {
		if r >= 0 {
			out.listed[r] = uint32(code) // #nosec G115 -- codes are uint32
			continue
		}
		perCombo[c.combo.get(int(-1-r))]++
	}
	// The codes with one row, grouped by combination (a counting sort).
	for combo, n := range perCombo {
		out.oneStart[combo+1] = out.oneStart[combo] + uint32(n) // #nosec G115 -- fewer than 2^31 rows
	}
	out.ones = make([]uint32, out.oneStart[len(c.combos)])
	next := make([]uint32, len(c.combos))
	copy(next, out.oneStart)
	for code, r := range pl.ref {
		if r < 0 {
			combo := c.combo.get(int(-1 - r))
			out.ones[next[combo]] = uint32(code) // #nosec G115 -- codes are uint32
			next[combo]++
		}
	}
	clear(perCombo)
	var touched []uint32
	for r, l := range pl.lists {
		for _, pos := range l {
			combo := c.combo.get(int(pos))
			if perCombo[combo] == 0 {
				touched = append(touched, combo)
			}
			perCombo[combo]++
		}
		for _, combo := range touched {
			out.pairs = append(out.pairs, comboCount{combo: combo, n: perCombo[combo]})
			perCombo[combo] = 0
		}
		touched = touched[:0]
		out.start[r+1] = uint32(len(out.pairs)) // #nosec G115 -- fewer pairs than rows
	}
	out.pairs = trimmed(out.pairs)
	return out
}

// count returns, per code (size codes), its rows whose combination
// allow passes.
func (cc *comboCounts) count(allow []uint8, size int) []int64 {
	counts := make([]int64, size)
	for r, code := range cc.listed {
		var n int64
		for _, p := range cc.pairs[cc.start[r]:cc.start[r+1]] {
			n += int64(p.n) * int64(allow[p.combo])
		}
		counts[code] = n
	}
	for combo, ok := range allow {
		if ok == 1 {
			for _, code := range cc.ones[cc.oneStart[combo]:cc.oneStart[combo+1]] {
				counts[code] = 1
			}
		}
	}
	return counts
}

// byComboOnly returns, for a plan over the whole CAT whose only filters
// are on topic, model and persona, dimension d's counts from the CAT's
// comboLists; ok is false otherwise, or when they are not current.
func (p plan) byComboOnly(d analytics.Dimension) (counts []int64, ok bool) {
	k := -1
	for i, pd := range postingDims {
		if pd == d {
			k = i
		}
	}
	if k < 0 || p.checkTime || p.comboAllowed == nil || p.lo != 0 || p.hi != p.cat.at.len() ||
		p.allowBy[analytics.Question] != nil || p.allowBy[analytics.Answer] != nil {
		return nil, false
	}
	l := p.cat.comboLists()
	if l == nil {
		return nil, false
	}
	return l.dims[k].count(p.comboAllowed, p.cat.dicts[d].len()), true
}
