// Package retention keeps the authentication audit log from growing
// without bound: a Pruner deletes the events older than the retention
// time, once at start and then on every tick of a schedule the caller
// gives (catsrv serve: hourly).
package retention

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/schedule"
	"github.com/catsrv/catsrv/ports"
)

// Defaults of catsrv serve (docs/operations.md, "Audit retention").
const (
	// DefaultRetention is how long audit events are kept: 90 days.
	DefaultRetention = 90 * 24 * time.Hour
	// DefaultInterval is how often the background pruner runs.
	DefaultInterval = time.Hour
	// DefaultBatch is how many events one delete statement removes.
	DefaultBatch = 1000
)

// Pruner deletes audit events older than its retention. Safe for
// concurrent use if the audit log is.
type Pruner struct {
	audit     ports.AuditLog
	clock     ports.Clock
	retention time.Duration
	batch     int
}

// New returns a pruner that keeps the events of the last retention (which
// must be positive) and deletes older ones batch at a time (batch <= 0:
// DefaultBatch).
func New(audit ports.AuditLog, clock ports.Clock, retention time.Duration, batch int) (*Pruner, error) {
	if retention <= 0 {
		return nil, errs.New(errs.KindInvalid, "audit retention must be positive, got %s", retention)
	}
	if batch <= 0 {
		batch = DefaultBatch
	}
	return &Pruner{audit: audit, clock: clock, retention: retention, batch: batch}, nil
}

// Cut is the time before which events are deleted now.
func (p *Pruner) Cut() time.Time { return p.clock.Now().Add(-p.retention) }

// Prune deletes the events older than Cut and returns how many.
func (p *Pruner) Prune(ctx context.Context) (int, error) {
	return p.audit.Prune(ctx, p.Cut(), p.batch)
}

// Run prunes right away, then once per value received from ticks, until
// ctx ends or ticks is closed. report (may be nil) is told the outcome of
// every pass; a failed pass does not stop the schedule.
func (p *Pruner) Run(ctx context.Context, ticks <-chan time.Time, report func(deleted int, err error)) {
	schedule.Run(ctx, ticks, p.Prune, report)
}
