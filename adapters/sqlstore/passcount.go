package sqlstore

import (
	"context"
	"math/bits"
	"slices"
)

// A pass counts hundreds of thousands of rows per request, five codes
// each: in arrays indexed by code, not maps. Dictionary codes are dense
// serials, so an array as long as the dictionary's highest code (read
// once per pass) holds every count; a code added after that read, by a
// write committed meanwhile, falls back to a map.

// maxDenseCode bounds the arrays: a larger dictionary counts its higher
// codes in the map.
const maxDenseCode = 1 << 22

// counter counts rows per code of one dimension.
type counter struct {
	dense  []int64
	sparse map[uint64]int64
}

func newCounter(maxCode uint64) *counter {
	return &counter{dense: make([]int64, min(maxCode, maxDenseCode)+1), sparse: map[uint64]int64{}}
}

func (c *counter) add(code uint64, n int64) {
	if code < uint64(len(c.dense)) {
		c.dense[code] += n
		return
	}
	c.sparse[code] += n
}

func (c *counter) merge(o *counter) {
	for code, n := range o.dense {
		if n != 0 {
			c.add(uint64(code), n) // #nosec G115 -- an index
		}
	}
	for code, n := range o.sparse {
		c.add(code, n)
	}
}

// counts returns the codes counted at least once, in code order: a slice
// of pairs, not a map (a list may hold hundreds of thousands of codes,
// and a map of them costs three times the memory).
func (c *counter) counts() codeCounts {
	n := len(c.sparse)
	for _, v := range c.dense {
		if v != 0 {
			n++
		}
	}
	out := make(codeCounts, 0, n)
	for code, v := range c.dense {
		if v != 0 {
			out = append(out, codeCount{code: uint64(code), n: v}) // #nosec G115 -- an index
		}
	}
	// The map's codes all lie past the array's.
	dense := len(out)
	for code, v := range c.sparse {
		out = append(out, codeCount{code: code, n: v})
	}
	slices.SortFunc(out[dense:], byCode)
	return out
}

// codeSet is the codes of one filtered dimension's values.
type codeSet struct {
	dense  []bool
	sparse map[uint64]struct{}
}

func newCodeSet(codes map[uint64]struct{}, maxCode uint64) codeSet {
	s := codeSet{dense: make([]bool, min(maxCode, maxDenseCode)+1), sparse: map[uint64]struct{}{}}
	for code := range codes {
		if code < uint64(len(s.dense)) {
			s.dense[code] = true
		} else {
			s.sparse[code] = struct{}{}
		}
	}
	return s
}

func (s codeSet) has(code uint64) bool {
	if code < uint64(len(s.dense)) {
		return s.dense[code]
	}
	_, ok := s.sparse[code]
	return ok
}

// passFilter is one filtered dimension of a pass.
type passFilter struct {
	dim   int
	codes codeSet
}

// tally is what a pass, or one worker's share of it, counts.
type tally struct {
	total int64
	lists [dimsCodes]*counter // by analytics.Dimension
}

func newTally(maxCodes [dimsCodes]uint64) *tally {
	t := &tally{}
	for d := range t.lists {
		t.lists[d] = newCounter(maxCodes[d])
	}
	return t
}

func (t *tally) merge(o *tally) {
	t.total += o.total
	for d := range t.lists {
		t.lists[d].merge(o.lists[d])
	}
}

// count adds one row's codes to the tally under the filters: a row that
// fails no filter counts in the total and every list, a row that fails
// exactly one counts only in that filter's own list.
func (t *tally) count(codes *[dimsCodes]uint64, filters []passFilter) {
	var failed uint
	for _, f := range filters {
		if !f.codes.has(codes[f.dim]) {
			failed |= 1 << f.dim
		}
	}
	switch {
	case failed == 0:
		t.total++
		for d, c := range codes {
			t.lists[d].add(c, 1)
		}
	case failed&(failed-1) == 0:
		d := bits.TrailingZeros(failed)
		t.lists[d].add(codes[d], 1)
	}
}

// maxCodes reads the highest code of every dictionary, in one query.
func (s *Store) maxCodes(ctx context.Context, q queryer) ([dimsCodes]uint64, error) {
	var out [dimsCodes]uint64
	query := "SELECT "
	for d, table := range dictionaryTables {
		if d > 0 {
			query += ", "
		}
		query += "(SELECT COALESCE(MAX(code), 0) FROM " + table + ")"
	}
	var codes [dimsCodes]int64
	dest := make([]any, dimsCodes)
	for d := range codes {
		dest[d] = &codes[d]
	}
	if err := q.QueryRowContext(ctx, query).Scan(dest...); err != nil {
		return out, internal(err)
	}
	for d, c := range codes {
		out[d] = uint64(max(c, 0))
	}
	return out, nil
}

// passOutcome is a finished pass: the total and each dimension's counts
// under every filter but its own.
type passOutcome struct {
	total int64
	lists [dimsCodes]codeCounts
}
