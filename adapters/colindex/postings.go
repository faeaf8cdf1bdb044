package colindex

import (
	"slices"
	"sort"

	"github.com/catsrv/catsrv/core/analytics"
)

// A question or answer filter usually keeps a few percent of the rows.
// Each CAT keeps, per question and per answer code, the positions of its
// rows in time order (a posting list); a plan whose filter's rows are few
// counts only those rows instead of scanning the range.

// postingDims are the dimensions with posting lists.
var postingDims = [2]analytics.Dimension{analytics.Question, analytics.Answer}

// postingShare is how small a share of the range a filter's rows must be
// for the plan to count from its posting lists instead of scanning.
const postingShare = 8

// addPosting records row n of code in dimension d's posting lists.
func (c *catIndex) addPosting(k int, code uint32, n int) {
	for int(code) >= len(c.postings[k]) {
		c.postings[k] = append(c.postings[k], nil)
	}
	c.postings[k][code] = append(c.postings[k][code], int32(n)) // #nosec G115 -- a CAT holds fewer than 2^31 rows
}

// insertPosting records the row inserted at position n of code in
// dimension k's posting lists, keeping the list in position order.
func (c *catIndex) insertPosting(k int, code uint32, n int) {
	for int(code) >= len(c.postings[k]) {
		c.postings[k] = append(c.postings[k], nil)
	}
	l := c.postings[k][code]
	at := sort.Search(len(l), func(i int) bool { return int(l[i]) >= n })
	c.postings[k][code] = slices.Insert(l, at, int32(n)) // #nosec G115 -- a CAT holds fewer than 2^31 rows
}

// shiftPostings adds one to the positions at or after n in dimension d's
// posting lists, after a row was inserted at n (before its own posting
// is): those rows moved one down. Only the codes of the moved rows have
// such positions, each in its list's tail, so the cost is the suffix and
// a binary search per distinct code in it, however many codes the CAT has.
func (c *catIndex) shiftPostings(k int, d analytics.Dimension, n int) {
	moved := c.codes[d][n+1:]
	seen := c.seen[k]
	if len(seen) < len(c.postings[k]) {
		seen = make([]bool, len(c.postings[k]))
		c.seen[k] = seen
	}
	for _, code := range moved {
		if seen[code] {
			continue
		}
		seen[code] = true
		l := c.postings[k][code]
		for i := sort.Search(len(l), func(i int) bool { return int(l[i]) >= n }); i < len(l); i++ {
			l[i]++
		}
	}
	for _, code := range moved {
		seen[code] = false
	}
}

// rebuildPostings recomputes the posting lists after the rows moved.
func (c *catIndex) rebuildPostings() {
	for k, d := range postingDims {
		c.postings[k] = make([][]int32, len(c.dicts[d].keys))
		for n, code := range c.codes[d] {
			c.addPosting(k, code, n)
		}
	}
}

// choosePostings picks, among the plan's question and answer filters, the
// one with the fewest rows in the range, if they are few enough; it sets
// p.postings to those rows' positions, one slice per allowed code.
func (p *plan) choosePostings(vals func(analytics.Dimension) []string) {
	if p.checkTime {
		return
	}
	best := (p.hi - p.lo) / postingShare
	for k, d := range postingDims {
		if p.allowBy[d] == nil {
			continue
		}
		var lists [][]int32
		rows := 0
		seen := map[uint32]bool{}
		for _, v := range vals(d) {
			for _, code := range p.cat.dicts[d].byKey[v] {
				if seen[code] {
					continue
				}
				seen[code] = true
				l := p.cat.postings[k][code]
				from := sort.Search(len(l), func(i int) bool { return int(l[i]) >= p.lo })
				to := sort.Search(len(l), func(i int) bool { return int(l[i]) >= p.hi })
				lists = append(lists, l[from:to])
				rows += to - from
			}
		}
		if rows < best {
			best, p.postings = rows, lists
		}
	}
}

// countPostings adds the plan's matching rows among its posting lists to
// counts: per code of col, or all to counts[0] when col is nil.
func (p plan) countPostings(counts []int64, col []uint32) {
	for _, list := range p.postings {
		for _, r := range list {
			pass := uint8(1)
			for _, f := range p.filters {
				pass &= f.allow[f.col[r]]
			}
			code := uint32(0)
			if col != nil {
				code = col[r]
			}
			counts[code] += int64(pass)
		}
	}
}
