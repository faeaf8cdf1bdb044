package memstore

import (
	"context"
	"sync"

	"github.com/catsrv/catsrv/ports"
)

// JobLocks is a ports.JobLock for one process: in-memory stores are never
// shared, so holding the lock in memory is enough. Safe for concurrent use.
type JobLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

var _ ports.JobLock = (*JobLocks)(nil)

// TryLock takes the job's lock unless it is held.
func (l *JobLocks) TryLock(_ context.Context, job string) (func(), bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[job] {
		return func() {}, false, nil
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[job] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.held, job)
		})
	}, true, nil
}
