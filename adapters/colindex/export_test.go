package colindex

import (
	"context"
	"time"
)

// RefreshHold is Refresh, also returning how long applying the rows held
// the write lock (for BenchmarkApplyHold).
func (x *Index) RefreshHold(ctx context.Context) (time.Duration, error) {
	x.readMu.Lock()
	defer x.readMu.Unlock()
	b, err := x.read(ctx)
	if err != nil {
		return 0, err
	}
	defer x.changeMu.Unlock()
	if b.rows == 0 {
		return 0, nil
	}
	b.prepare()
	start := time.Now()
	x.apply(&b)
	hold := time.Since(start)
	x.rank()
	x.sortUnsorted()
	return hold, nil
}
