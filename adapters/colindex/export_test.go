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
	x.rank()
	x.sortUnsorted()
	return hold, nil
}
