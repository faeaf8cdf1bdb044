package colindex

import (
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
// for the plan to count from its posting lists instead of scanning: a
// position costs a few times a scanned row (a random read, not a stream).
const postingShare = 4

// shiftPostings adds one to the positions at or after n in dimension d's
// posting lists, after a row was inserted at n (before its own posting
// is): those rows moved one down. Only the codes of the moved rows have
// such positions, each in its list's tail, so the cost is the suffix and
// a binary search per distinct code in it, however many codes the CAT has.
func (c *catIndex) shiftPostings(k int, d analytics.Dimension, n int) {
	col, _ := c.column(d)
	seen := c.seen[k]
	if len(seen) < c.postings[k].len() {
		seen = make([]bool, c.postings[k].len())
		c.seen[k] = seen
	}
	var buf [blockRows]uint32
	for lo := n + 1; lo < col.len(); lo += blockRows {
		for _, code := range col.decode(buf[:], lo, min(lo+blockRows, col.len())) {
			if !seen[code] {
				seen[code] = true
				c.postings[k].shift(code, n)
			}
		}
	}
	for lo := n + 1; lo < col.len(); lo += blockRows {
		for _, code := range col.decode(buf[:], lo, min(lo+blockRows, col.len())) {
			seen[code] = false
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
			for code := range p.cat.dicts[d].codesOf(v) {
				if seen[code] {
					continue
				}
				seen[code] = true
				l := p.cat.postings[k].list(code)
				from := sort.Search(len(l), func(i int) bool { return int(l[i]) >= p.lo })
				to := from + sort.Search(len(l)-from, func(i int) bool { return int(l[from+i]) >= p.hi })
				lists = append(lists, l[from:to])
				rows += to - from
			}
		}
		if rows < best {
			best, p.postings = rows, lists
			p.postingsCol, _ = p.cat.column(d)
		}
	}
}

// countPostings adds the plan's matching rows among its posting lists to
// counts: per code of col, or all to counts[0] when col is nil. The rows
// pass the filter the lists come from, so only the others are checked.
func (p plan) countPostings(counts []int64, col *codeColumn) {
	var others []filter
	for _, f := range p.filters {
		if f.col != p.postingsCol {
			others = append(others, f)
		}
	}
	for _, list := range p.postings {
		switch {
		case len(others) == 0 && col == nil:
			counts[0] += int64(len(list))
		case len(others) == 0:
			countPositions(counts, col, list)
		default:
			for _, r := range list {
				pass := uint8(1)
				for _, f := range others {
					pass &= f.allow[f.col.get(int(r))]
				}
				code := uint32(0)
				if col != nil {
					code = col.get(int(r))
				}
				counts[code] += int64(pass)
			}
		}
	}
}
