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
// into the order of the others.
func (d *dictionary) updateRanks() {
	if d.ranked == len(d.keys) {
		return
	}
	byText := func(a, b uint32) int {
		if c := cmp.Compare(d.texts[a], d.texts[b]); c != 0 {
			return c
		}
		return cmp.Compare(d.keys[a], d.keys[b])
	}
	fresh := make([]uint32, 0, len(d.keys)-d.ranked)
	for c := d.ranked; c < len(d.keys); c++ {
		fresh = append(fresh, uint32(c)) // #nosec G115 -- codes are uint32
	}
	slices.SortFunc(fresh, byText)
	merged := make([]uint32, 0, len(d.keys))
	old := d.byRank
	for len(old) > 0 && len(fresh) > 0 {
		if byText(old[0], fresh[0]) <= 0 {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, fresh = append(merged, fresh[0]), fresh[1:]
		}
	}
	merged = append(append(merged, old...), fresh...)
	d.byRank = merged
	d.rank = slices.Grow(d.rank[:0], len(merged))[:len(merged)]
	for r, c := range merged {
		d.rank[c] = uint32(r) // #nosec G115 -- codes are uint32
	}
	d.ranked = len(d.keys)
}

// sortedGroups turns per-code counts into groups in SortGroups order,
// keeping the first limit of them (all when limit is 0): the order is
// computed for every group, but only the kept ones are built.
func (d *dictionary) sortedGroups(counts []int64, limit int) []analytics.Group {
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
		return cmp.Compare(d.rank[a], d.rank[b])
	})
	for k, code := range big[:min(len(big), kept)] {
		out[k] = analytics.Group{Key: d.keys[code], Text: d.texts[code], Count: counts[code]}
	}
	// next[n] is where the next group of count n goes: counts descending.
	var next [bucketMax + 1]int32
	at := int32(len(big)) // #nosec G115 -- fewer than 2^31 groups
	for n := bucketMax; n >= 1; n-- {
		next[n] = at
		at += perCount[n]
	}
	for _, code := range d.byRank {
		if n := counts[code]; n > 0 && n <= bucketMax {
			if at := next[n]; int(at) < kept {
				out[at] = analytics.Group{Key: d.keys[code], Text: d.texts[code], Count: n}
			}
			next[n]++
		}
	}
	return out
}
