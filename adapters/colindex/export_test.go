package colindex

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// RefreshHold is Refresh, also returning how long applying the rows held
// the write lock (for BenchmarkApplyHold).
func (x *Index) RefreshHold(ctx context.Context) (time.Duration, error) {
	x.turn.Lock()
	defer x.turn.Unlock()
	b := batch{cats: map[string]*catDraft{}}
	high, err := x.src.ReadSince(ctx, x.high, func(r *analytics.FeedRow) error {
		b.add(x.cats, r)
		return nil
	})
	if err != nil {
		return 0, err
	}
	b.high = high
	b.prepare()
	start := time.Now()
	x.mu.Lock()
	b.apply(x.cats)
	x.high, x.rows = b.high, x.rows+b.rows
	x.mu.Unlock()
	hold := time.Since(start)
	x.sortUnsorted()
	x.rank()
	return hold, nil
}
