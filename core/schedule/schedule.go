// Package schedule runs the passes of a background job (the retention
// jobs): one right away, then one per tick of a schedule the caller gives.
package schedule

import (
	"context"
	"time"
)

// Run calls pass right away, then once per value received from ticks,
// until ctx ends or ticks is closed. report (may be nil) is told the
// outcome of every pass that ends before ctx does; a failed pass does not
// stop the schedule.
func Run[R any](ctx context.Context, ticks <-chan time.Time, pass func(context.Context) (R, error), report func(R, error)) {
	once := func() {
		r, err := pass(ctx)
		if report != nil && ctx.Err() == nil {
			report(r, err)
		}
	}
	once()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ticks:
			if !ok {
				return
			}
			once()
		}
	}
}
