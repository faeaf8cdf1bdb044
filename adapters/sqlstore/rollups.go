package sqlstore

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Rollups answers ports.RollupStore from the raw pass over the code blocks
// (raw.go), for whole UTC days: a range bound that is not a UTC midnight is
// an errs.KindInvalid error, as the port asks.
type Rollups struct {
	store *Store
}

var _ ports.RollupStore = (*Rollups)(nil)

// Answer counts the wanted parts of the query's answer.
func (r *Rollups) Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	if _, _, err := dayBounds(q.Range); err != nil {
		return analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}, err
	}
	return r.store.Answer(ctx, q, want)
}

// dayBounds returns the range as day numbers, refusing bounds that are not
// UTC midnights.
func dayBounds(r analytics.Range) (start, end int64, err error) {
	for _, b := range []time.Time{r.Start, r.End} {
		if !b.IsZero() && !b.UTC().Equal(b.UTC().Truncate(24*time.Hour)) {
			return 0, 0, errs.New(errs.KindInvalid, "rollups count whole UTC days: range bounds must be UTC midnights")
		}
	}
	return dayOf(r.Start), dayOf(r.End), nil
}

// dayOf returns the UTC day of t as days since 1970-01-01 (negative before).
func dayOf(t time.Time) int64 {
	sec := t.Unix()
	day := sec / 86400
	if sec%86400 < 0 {
		day--
	}
	return day
}
