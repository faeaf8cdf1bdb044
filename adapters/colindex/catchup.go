package colindex

import (
	"context"
	"sync"
)

// catchUps lets concurrent callers of CatchUp share refreshes: next is
// the refresh the callers that came since the running one began wait for
// (nil when none has come), running whether a goroutine runs them.
type catchUps struct {
	mu      sync.Mutex
	running bool
	next    *catchUp
}

// catchUp is one shared refresh: done is closed when it has ended, err
// its outcome; waiting counts the callers that joined it.
type catchUp struct {
	done    chan struct{}
	err     error
	waiting int
}

// CatchUp returns once a refresh that began after the call has ended,
// with that refresh's error: every row committed before the call (and
// below the feed's position then) is then visible to queries, as after
// a Refresh of its own. Concurrent callers share refreshes: those that
// come while one runs all wait for the next, one refresh for all of them,
// instead of one refresh each taking turns. That is what many writers
// committing at once (chat turns) call after their commit. The shared
// refresh does not stop when a caller's ctx ends; the caller stops
// waiting for it then and gets ctx's cause.
func (x *Index) CatchUp(ctx context.Context) error {
	x.catchUps.mu.Lock()
	c := x.catchUps.next
	if c == nil {
		c = &catchUp{done: make(chan struct{})}
		x.catchUps.next = c
	}
	c.waiting++
	if !x.catchUps.running {
		x.catchUps.running = true
		// The refreshes serve every caller: they keep this caller's
		// values (logging, tracing) but not its cancellation.
		go x.runCatchUps(context.WithoutCancel(ctx))
	}
	x.catchUps.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// runCatchUps runs the shared refreshes one after the other until no
// caller waits for one: each is taken off next before it begins, so the
// callers that come meanwhile wait for the one after it.
func (x *Index) runCatchUps(ctx context.Context) {
	for {
		x.catchUps.mu.Lock()
		c := x.catchUps.next
		x.catchUps.next = nil
		if c == nil {
			x.catchUps.running = false
			x.catchUps.mu.Unlock()
			return
		}
		x.catchUps.mu.Unlock()
		c.err = x.Refresh(ctx)
		close(c.done)
	}
}
