package sqlstore

import (
	"time"

	"github.com/catsrv/catsrv/adapters/internal/listmemo"
	"github.com/catsrv/catsrv/core/analytics"
)

// The lists a one-pass Total counted, as counts per dictionary code, wait
// in a listmemo for the Groups and TopGroups calls of the same request
// (see onePass). An entry is served only if this process committed no
// Append since the pass began (every commit invalidates the memo): the
// list calls then see the same rows as the Total, which is at least as
// consistent as six separate queries.
const (
	memoTTL = 5 * time.Second
	memoMax = 256
)

func newRawMemo() *listmemo.Memo[codeCounts] { return listmemo.New[codeCounts](memoTTL, memoMax) }

// memoKey identifies a Groups call: the normalized selection and the
// dimension.
func memoKey(n selection, d analytics.Dimension) string {
	return listmemo.Key(d, n.cat, n.rng.Start, n.rng.End, time.Time.UnixMicro,
		func(dim analytics.Dimension) []string { return n.filters[dim] })
}

// withoutFilter returns the selection without one dimension's filter.
func (n selection) withoutFilter(d analytics.Dimension) selection {
	out := n
	out.filters = make(map[analytics.Dimension][]string, len(n.filters))
	for dim, vals := range n.filters {
		if dim != d {
			out.filters[dim] = vals
		}
	}
	return out
}
