package sqlstore

import (
	"context"
	"database/sql/driver"
	"sync"

	"github.com/catsrv/catsrv/ports"
)

var _ ports.JobLock = (*Store)(nil)

// lockJob is the advisory lock class of background jobs (migrate.go lists
// the others); the second key hashes the schema and the job's name, so
// two schemas on one server, or two jobs, never exclude each other.
const lockJob = 0x63617403 // "cat\x03"

// TryLock takes the named job's lock without waiting (ports.JobLock). On
// PostgreSQL it is a session advisory lock (pg_try_advisory_lock) on a
// connection held until release, so every instance sharing the database
// competes for it and a crashed holder's lock ends with its connection.
// On SQLite, a file one host shares, it is held in this process only:
// deletions take the single writer's turn anyway, so two processes running
// a pass at once cost time, never correctness.
func (s *Store) TryLock(ctx context.Context, job string) (func(), bool, error) {
	if s.dialect != postgresDialect {
		return s.localLocks.TryLock(job)
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return func() {}, false, internal(err)
	}
	const key = "hashtext(current_schema() || '/' || $2)"
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1, "+key+")", lockJob, job).Scan(&ok); err != nil {
		_ = conn.Close()
		return func() {}, false, internal(err)
	}
	if !ok {
		_ = conn.Close()
		return func() {}, false, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// A failed unlock leaves the lock to the connection: closing
			// it returns it to the pool, so discard it instead.
			var unlocked bool
			err := conn.QueryRowContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1, "+key+")", lockJob, job).Scan(&unlocked)
			if err != nil || !unlocked {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			_ = conn.Close()
		})
	}, true, nil
}

// localLocks holds job locks within one process.
type localLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

// TryLock takes the job's lock unless this process holds it.
func (l *localLocks) TryLock(job string) (func(), bool, error) {
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
