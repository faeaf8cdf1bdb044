package colindex

import (
	"slices"
	"sort"
)

// postingLists holds one dimension's posting lists: per code, the
// positions of its rows in time order. Most question codes are one-off
// questions with a single row, so such a code keeps its position in
// place of a list (four bytes instead of a slice and its allocation).
type postingLists struct {
	// ref is, per code, the index of its list in lists when at least 0;
	// otherwise the code has one row, at position -1-ref.
	ref   []int32
	lists [][]int32
}

// len returns how many codes have postings.
func (p *postingLists) len() int { return len(p.ref) }

// list returns code's positions; the caller must not change them.
func (p *postingLists) list(code uint32) []int32 {
	if r := p.ref[code]; r >= 0 {
		return p.lists[r]
	}
	return []int32{-1 - p.ref[code]}
}

// insert records a row at position n for code, a new code being the
// next one, keeping the positions in order.
func (p *postingLists) insert(code uint32, n int) {
	pos := int32(n) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	if int(code) == len(p.ref) {
		p.ref = append(p.ref, -1-pos)
		return
	}
	r := p.ref[code]
	if r < 0 {
		one := -1 - r
		r = int32(len(p.lists)) // #nosec G115 -- fewer lists than rows
		p.lists = append(p.lists, []int32{min(one, pos), max(one, pos)})
		p.ref[code] = r
		return
	}
	l := p.lists[r]
	if l[len(l)-1] < pos { // the usual case: a row in time order
		p.lists[r] = append(l, pos)
		return
	}
	at := sort.Search(len(l), func(i int) bool { return l[i] >= pos })
	p.lists[r] = slices.Insert(l, at, pos)
}

// shift adds one to code's positions at or after n.
func (p *postingLists) shift(code uint32, n int) {
	pos := int32(n) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	r := p.ref[code]
	if r < 0 {
		if -1-r >= pos {
			p.ref[code]--
		}
		return
	}
	l := p.lists[r]
	for i := sort.Search(len(l), func(i int) bool { return l[i] >= pos }); i < len(l); i++ {
		l[i]++
	}
}

// rebuild recomputes the lists from the column, rows[code] being how
// many rows code has.
func (p *postingLists) rebuild(rows []int64, col *codeColumn) {
	p.ref, p.lists = make([]int32, len(rows)), nil
	for code, n := range rows {
		if n > 1 {
			p.ref[code] = int32(len(p.lists)) // #nosec G115 -- fewer lists than rows
			p.lists = append(p.lists, make([]int32, 0, n))
		}
	}
	var buf [blockRows]uint32
	for lo := 0; lo < col.len(); lo += blockRows {
		for i, code := range col.decode(buf[:], lo, min(lo+blockRows, col.len())) {
			pos := int32(lo + i) // #nosec G115 -- a CAT holds fewer than 2^31 rows
			if rows[code] > 1 {
				r := p.ref[code]
				p.lists[r] = append(p.lists[r], pos)
			} else {
				p.ref[code] = -1 - pos
			}
		}
	}
}

// trim drops the spare capacity that growing left behind.
func (p *postingLists) trim() {
	p.ref = trimmed(p.ref)
	for r, l := range p.lists {
		// Every list, however short its spare room: lists are most of
		// the rows' postings, and a later insert grows only its own.
		if cap(l) > len(l) {
			p.lists[r] = slices.Clone(l)
		}
	}
}

// countIn returns how many of code's positions are in [lo, hi).
func (p *postingLists) countIn(code uint32, lo, hi int) int64 {
	r := p.ref[code]
	if r < 0 {
		if pos := int(-1 - r); pos >= lo && pos < hi {
			return 1
		}
		return 0
	}
	l := p.lists[r]
	from, to := int32(lo), int32(hi) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	return int64(firstAtLeast(l, to) - firstAtLeast(l, from))
}

// firstAtLeast returns the index of the first position at least pos in
// the ascending l, len(l) when there is none. A code's rows spread
// roughly evenly over its CAT, so it starts where the position would be
// if they did, and widens from there by doubling steps before a binary
// search: a few cache lines per list instead of one per halving.
func firstAtLeast(l []int32, pos int32) int {
	n := len(l)
	if n == 0 || l[0] >= pos {
		return 0
	}
	if l[n-1] < pos {
		return n
	}
	// l[0] < pos <= l[n-1]: the answer is in [1, n-1].
	g := 1 + int(int64(n-2)*int64(pos-l[0])/int64(l[n-1]-l[0]))
	lo, hi := 0, n-1 // l[lo] < pos <= l[hi]
	if l[g] < pos {
		lo = g
		for step := 1; ; step *= 2 {
			if next := g + step; next >= hi || l[next] >= pos {
				hi = min(next, hi)
				break
			} else {
				lo = next
			}
		}
	} else {
		hi = g
		for step := 1; ; step *= 2 {
			if next := g - step; next <= lo || l[next] < pos {
				lo = max(next, lo)
				break
			} else {
				hi = next
			}
		}
	}
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if l[mid] < pos {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
