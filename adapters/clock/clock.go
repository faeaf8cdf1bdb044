// Package clock provides ports.Clock implementations: the system clock for
// production and a settable clock for tests.
package clock

import (
	"sync"
	"time"
)

// System reads the machine's clock.
type System struct{}

// Now returns the current time.
func (System) Now() time.Time { return time.Now() }

// Fixed is a clock that only moves when told to. Safe for concurrent use.
type Fixed struct {
	mu  sync.Mutex
	now time.Time
}

// NewFixed returns a clock standing at t.
func NewFixed(t time.Time) *Fixed { return &Fixed{now: t} }

// Now returns the clock's time.
func (f *Fixed) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward by d.
func (f *Fixed) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}
