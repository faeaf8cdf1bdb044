package colindex

import (
	"cmp"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
)

// The index returns groups already in the order of analytics.SortGroups
// (count descending, then text, then key). The port promises no order, so
// this is only about speed: the core sorts every list again, and sorting
// tens of thousands of one-off questions by text costs it tens of
// milliseconds, whereas an already sorted list costs it one linear pass.
// The index can order them cheaply because it ranks each dictionary's
// entries by (text, key) once, as they arrive: groups are then ordered by
// count with a counting sort, in rank order within a count.

// bucketMax is the highest count the counting sort handles; the few
// groups above it are sorted by comparison.
const bucketMax = 1024

// updateRanks ranks the entries added since the last call, merging them
// into the order of the others. It reuses the storage of the ranks, so
// it is for a dictionary no reader sees: the index ranks the others with
// merged and swaps the result in (see Index.rank).
func (d *dictionary) updateRanks() {
	if d.ranked == d.len() {
		return
	}
	d.byRank, d.rank = d.merged(d.rank)
	d.ranked = d.len()
}

// merged returns every entry in (text, key) order and the inverse, the
// latter in rank's storage when it is large enough.
func (d *dictionary) merged(rank []uint32) (byRank, ranks []uint32) {
	byText := func(a, b uint32) int {
		if c := cmp.Compare(d.text(a), d.text(b)); c != 0 {
			return c
		}
		return cmp.Compare(d.key(a), d.key(b))
	}
	fresh := make([]uint32, 0, d.len()-d.ranked)
	for c := d.ranked; c < d.len(); c++ {
		fresh = append(fresh, uint32(c)) // #nosec G115 -- codes are uint32
	}
	slices.SortFunc(fresh, byText)
	merged := make([]uint32, 0, d.len())
	old := d.byRank
	for len(old) > 0 && len(fresh) > 0 {
		if byText(old[0], fresh[0]) <= 0 {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, fresh = append(merged, fresh[0]), fresh[1:]
		}
	}
	merged = append(append(merged, old...), fresh...)
	rank = slices.Grow(rank[:0], len(merged))[:len(merged)]
	for r, c := range merged {
		rank[c] = uint32(r) // #nosec G115 -- codes are uint32
	}
	return merged, rank
}

// order returns the entries in (text, key) order and each entry's rank
// in it.
func (d *dictionary) order() (byRank, rank []uint32) {
	if d.ranked < d.len() {
		// Between a refresh's apply and its ranks: order this once.
		return d.merged(nil)
	}
	return d.byRank, d.rank
}

// sortedGroups turns per-code counts into groups in SortGroups order,
// keeping the first limit of them (all when limit is 0): the order is
// computed for every group, but only the kept ones are built.
func (d *dictionary) sortedGroups(counts []int64, limit int) []analytics.Group {
	byRank, rank := d.order()
	var (
		perCount [bucketMax + 1]int32 // how many groups have each small count
		big      []uint32             // codes counted above bucketMax
		groups   int
	)
	for code, n := range counts {
		switch {
		case n == 0:
		case n > bucketMax:
			big = append(big, uint32(code)) // #nosec G115 -- codes are uint32
			groups++
		default:
			perCount[n]++
			groups++
		}
	}
	if groups == 0 {
		return nil
	}
	kept := groups
	if limit > 0 && limit < kept {
		kept = limit
	}
	out := make([]analytics.Group, kept)
	slices.SortFunc(big, func(a, b uint32) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(rank[a], rank[b])
	})
	for k, code := range big[:min(len(big), kept)] {
		out[k] = analytics.Group{Key: d.key(code), Text: d.text(code), Count: counts[code]}
	}
	if len(big) >= kept {
		return out
	}
	// next[n] is where the next group of count n goes: counts descending.
	var next [bucketMax + 1]int32
	at := int32(len(big)) // #nosec G115 -- fewer than 2^31 groups
	for n := bucketMax; n >= 1; n-- {
		next[n] = at
		at += perCount[n]
	}
	for _, code := range byRank {
		if n := counts[code]; n > 0 && n <= bucketMax {
			if at := next[n]; int(at) < kept {
				out[at] = analytics.Group{Key: d.key(code), Text: d.text(code), Count: n}
			}
			next[n]++
		}
	}
	return out
}
