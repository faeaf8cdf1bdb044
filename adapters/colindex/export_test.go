package colindex

import (
	"context"
	"time"
)

// RefreshHold is Refresh, also returning how long applying the rows held
// the write lock (for BenchmarkApplyHold).
func (x *Index) RefreshHold(ctx context.Context) (time.Duration, error) {
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	b, err := x.read(ctx)
	if err != nil || b.rows == 0 {
		return 0, err
	}
	b.prepare()
	start := time.Now()
	x.apply(&b)
	hold := time.Since(start)
	x.rank(&b)
	x.sortUnsorted()
	return hold, nil
}

// CatchUpWaiting is how many CatchUp callers wait for the next shared
// refresh (one not begun yet).
func (x *Index) CatchUpWaiting() int {
	x.catchUps.mu.Lock()
	defer x.catchUps.mu.Unlock()
	if x.catchUps.next == nil {
		return 0
	}
	return x.catchUps.next.waiting
}
