package colindex

import (
	"time"

	"github.com/catsrv/catsrv/adapters/internal/listmemo"
	"github.com/catsrv/catsrv/core/analytics"
)

// The passes Total started (see pass.go) wait in a listmemo for the Groups
// and TopGroups calls of the same request, by the selection and dimension
// of each call. The memo's generation is the index's: every change to the
// rows (applied, sorted, trimmed) invalidates it, so no list counted
// before a change is served after it.
const (
	memoTTL = 5 * time.Second
	// memoMax bounds the entries kept: a pass's question list can be
	// megabytes.
	memoMax = 64
)

func newPassMemo() *listmemo.Memo[*onePass] { return listmemo.New[*onePass](memoTTL, memoMax) }

// putPass keeps the pass for the list calls of sel's request.
func (x *Index) putPass(sel analytics.Selection, pass *onePass) {
	for d, want := range pass.want {
		if want {
			dim := analytics.Dimension(d)
			list := analytics.Selection{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters.Without(dim)}
			x.memo.Put(memoKey(list, dim), pass, pass.gen)
		}
	}
}

// memoKey identifies a list call: the dimension and the selection as the
// index resolves it (times in whole microseconds, see ceilMicros).
func memoKey(sel analytics.Selection, d analytics.Dimension) string {
	return listmemo.Key(d, sel.Cat, sel.Range.Start, sel.Range.End, ceilMicros, sel.Filters.Values)
}
