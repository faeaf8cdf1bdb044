package colindex

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
)

// A question or answer list cut to a limit, over a range with no filter,
// needs only the codes counted most in the range. A code counts in a
// range at most its rows in the whole CAT (its running total), so visiting
// the codes by total, highest first, and counting each in the range from
// its posting list, the codes not visited yet cannot reach the limit's
// lowest count once their totals are below it: the hundred most asked
// questions of thirty days are found among a few hundred codes instead of
// counting all of them (hundreds of thousands at 10M rows). Each CAT
// keeps its question and answer codes by total in power-of-two classes,
// so that adding a row costs a comparison, not a reordering.

// heavyFloor is the lowest class kept: codes with fewer than 2^heavyFloor
// rows (most questions, asked once) are in no class, and a list whose
// limit is not reached above them is counted the usual way.
const heavyFloor = 3

// heavyCodes are one dimension's codes by class: class b, from
// heavyFloor on, lists the codes whose total reached 2^b, in the order
// they reached it. A code whose total is in [2^b, 2^(b+1)) belongs to
// class b; it is still listed in the lower classes it passed through,
// where visits skip it.
type heavyCodes [][]uint32

// classOf returns the class of a total of at least one.
func classOf(n int64) int { return bits.Len64(uint64(n)) - 1 } // #nosec G115 -- totals are positive

// add records that code's total is now n, after one more row.
func (h *heavyCodes) add(code uint32, n int64) {
	if n < 1<<heavyFloor || n&(n-1) != 0 {
		return
	}
	h.put(code, classOf(n))
}

// put appends code to class b.
func (h *heavyCodes) put(code uint32, b int) {
	for len(*h) <= b {
		*h = append(*h, nil)
	}
	(*h)[b] = append((*h)[b], code)
}

// heavyOf returns the classes of every code of totals, each code in its
// own class only, each class at its size.
func heavyOf(totals []int64) heavyCodes {
	var sizes [64]int
	classes := 0
	for _, n := range totals {
		if n >= 1<<heavyFloor {
			b := classOf(n)
			sizes[b]++
			classes = max(classes, b+1)
		}
	}
	h := make(heavyCodes, classes)
	for b := heavyFloor; b < classes; b++ {
		h[b] = make([]uint32, 0, sizes[b])
	}
	for code, n := range totals {
		if n >= 1<<heavyFloor {
			h.put(uint32(code), classOf(n)) // #nosec G115 -- codes are uint32
		}
	}
	return h
}

// codeCount is a code and its count in a range.
type codeCount struct {
	code uint32
	n    int64
}

// heavyVisitCost is what visiting a code costs, in rows of a scan: its
// total and, for a range, the two searches of its posting list.
const heavyVisitCost = 32

// topOfRange returns the first limit groups, in SortGroups order, of
// postingDims[k] over the plan's range, which must be unfiltered and
// sliced (the CAT in time order), visiting codes by class from the
// highest; ok is false when the limit's lowest count is not known to be
// reached before budget codes are visited or the classes run out, and
// the caller counts the list the usual way.
func (p plan) topOfRange(k, limit, budget int) (groups []analytics.Group, ok bool) {
	d := postingDims[k]
	totals, lists := p.cat.totals[d], &p.cat.postings[k]
	whole := p.lo == 0 && p.hi == p.cat.at.len()
	if !whole && lists.len() < len(totals) {
		return nil, false // a CAT still receiving its rows
	}
	if limit > budget {
		return nil, false // each visit finds at most one of the limit's codes
	}
	var (
		least   = make([]int64, 0, limit) // a min-heap of the highest counts seen
		counted []codeCount               // every code counted at least least[0] when it was
	)
	h := p.cat.heavy[k]
	for b := len(h) - 1; b >= heavyFloor; b-- {
		for _, code := range h[b] {
			n := totals[code]
			if classOf(n) != b {
				continue // listed when it passed through this class
			}
			if budget--; budget < 0 {
				return nil, false
			}
			if !whole {
				n = lists.countIn(code, p.lo, p.hi)
			}
			switch {
			case n == 0:
			case len(least) < limit:
				least = pushHeap(least, n)
				counted = append(counted, codeCount{code, n})
			case n >= least[0]:
				if n > least[0] {
					least[0] = n
					siftDown(least)
				}
				counted = append(counted, codeCount{code, n})
			}
		}
		// Every code not visited has fewer than 2^b rows in the CAT.
		if len(least) == limit && least[0] >= 1<<b {
			return p.cat.dicts[d].topGroups(counted, limit), true
		}
	}
	return nil, false
}

// pushHeap adds n to the min-heap h.
func pushHeap(h []int64, n int64) []int64 {
	h = append(h, n)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[parent] <= h[i] {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
	return h
}

// siftDown restores the min-heap h after its root grew.
func siftDown(h []int64) {
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l] < h[least] {
			least = l
		}
		if r < len(h) && h[r] < h[least] {
			least = r
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}

// topGroups returns the first limit of the counted codes as groups in
// SortGroups order: count descending, then rank (text, then key).
func (d *dictionary) topGroups(counted []codeCount, limit int) []analytics.Group {
	_, rank := d.order()
	slices.SortFunc(counted, func(a, b codeCount) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(rank[a.code], rank[b.code])
	})
	counted = counted[:min(limit, len(counted))]
	out := make([]analytics.Group, len(counted))
	for k, c := range counted {
		out[k] = analytics.Group{Key: d.key(c.code), Text: d.text(c.code), Count: c.n}
	}
	return out
}
