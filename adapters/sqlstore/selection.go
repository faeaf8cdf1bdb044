package sqlstore

import (
	"slices"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// selection is an analytics.Selection reduced to what a query needs: the
// filter values that could ever have been stored, deduplicated.
type selection struct {
	cat     string
	rng     analytics.Range
	filters map[analytics.Dimension][]string
	// empty is set when the selection provably matches nothing: a CAT name
	// or every value of some filter could never have been stored (NUL
	// bytes, invalid UTF-8, oversized), so the database need not be asked.
	empty bool
}

func newSelection(s analytics.Selection) selection {
	out := selection{cat: s.Cat, rng: s.Range, filters: map[analytics.Dimension][]string{}}
	if analytics.CheckText("cat", s.Cat) != nil {
		out.empty = true
	}
	for _, d := range analytics.Dimensions {
		vals := s.Filters.Values(d)
		if len(vals) == 0 {
			continue
		}
		kept := make([]string, 0, len(vals))
		for _, v := range vals {
			if analytics.CheckText(d.String(), v) == nil {
				kept = append(kept, v)
			}
		}
		slices.Sort(kept)
		kept = slices.Compact(kept)
		if len(kept) == 0 {
			out.empty = true
		}
		out.filters[d] = kept
	}
	return out
}

// checkMicrosecond rejects a range bound finer than the stored precision,
// where truncated times could compare differently from the reference.
func checkMicrosecond(r analytics.Range) error {
	for _, b := range []time.Time{r.Start, r.End} {
		if !b.IsZero() && !b.Equal(b.Truncate(time.Microsecond)) {
			return errs.New(errs.KindInvalid, "range bounds must be whole microseconds")
		}
	}
	return nil
}
