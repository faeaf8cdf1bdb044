// Package retention deletes what each CAT keeps no longer: interactions
// older than analytics.retention_days and conversations whose last
// activity is older than chat.retention_days (unset: kept forever). A
// Pruner runs one pass at start and then on every tick of a schedule the
// caller gives; when several instances share a database, only the one
// holding the job lock (ports.JobLock) runs a pass, the others skip it.
// Deletions go in bounded batches (ports.InteractionEraser,
// ports.ConversationPruner), each committed on its own.
package retention

import (
	"context"
	"errors"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/schedule"
	"github.com/catsrv/catsrv/ports"
)

// Defaults of catsrv serve (docs/operations.md, "Retention").
const (
	// DefaultInterval is how often a pass runs.
	DefaultInterval = time.Hour
	// DefaultBatch is how many interactions or conversations one
	// transaction deletes.
	DefaultBatch = 1000
	// Job names the pass's job lock.
	Job = "retention"
)

// Deps are what a Pruner works with. Conversations may be nil (no chat
// store): only interactions are pruned then.
type Deps struct {
	Cats          ports.CatDirectory
	Interactions  ports.InteractionEraser
	Conversations ports.ConversationPruner
	Lock          ports.JobLock
	Clock         ports.Clock
	// Batch is the batch size of every deletion (<= 0: DefaultBatch).
	Batch int
}

// Pruner applies the CATs' retention.
type Pruner struct {
	d Deps
}

// New returns a pruner.
func New(d Deps) *Pruner {
	if d.Batch <= 0 {
		d.Batch = DefaultBatch
	}
	return &Pruner{d: d}
}

// Report is the outcome of one pass.
type Report struct {
	// Skipped is true when another instance held the job lock: nothing
	// was looked at.
	Skipped       bool
	Interactions  int // deleted
	Conversations int // deleted
}

// InteractionCut is the time before which a CAT that keeps days of
// interactions deletes them at now: the UTC midnight days before today's,
// so that whole UTC days go (the analytics count UTC days) and the CAT
// keeps today and the days before it. Zero for 0 days: keep forever.
func InteractionCut(now time.Time, days int) time.Time {
	if days <= 0 {
		return time.Time{}
	}
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -days)
}

// ConversationCut is the time before which a conversation's last activity
// makes it expire at now, for a CAT that keeps them days; zero for 0 days.
func ConversationCut(now time.Time, days int) time.Time {
	if days <= 0 {
		return time.Time{}
	}
	return now.Add(-time.Duration(days) * 24 * time.Hour)
}

// Pass runs one pass if it gets the job lock: for every configured CAT
// with a retention, its expired interactions and conversations are
// deleted. An error in one CAT does not stop the others; the pass returns
// every error, joined, with what it deleted.
func (p *Pruner) Pass(ctx context.Context) (Report, error) {
	release, ok, err := p.d.Lock.TryLock(ctx, Job)
	if err != nil {
		return Report{}, err
	}
	if !ok {
		return Report{Skipped: true}, nil
	}
	defer release()
	cats, err := p.d.Cats.Cats(ctx)
	if err != nil {
		return Report{}, err
	}
	now := p.d.Clock.Now()
	var (
		r    Report
		errs []error
	)
	for _, c := range cats {
		n, m, err := p.prune(ctx, c, now)
		r.Interactions += n
		r.Conversations += m
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return r, errors.Join(errs...)
}

// prune applies one CAT's retention.
func (p *Pruner) prune(ctx context.Context, c catconfig.Cat, now time.Time) (interactions, conversations int, err error) {
	var errs []error
	if cut := InteractionCut(now, c.Analytics.RetentionDays); !cut.IsZero() {
		n, err := p.d.Interactions.DeleteInteractions(ctx, analytics.Deletion{Cat: c.Name, Before: cut}, p.d.Batch)
		interactions = n
		errs = append(errs, err)
	}
	if cut := ConversationCut(now, c.ChatLog.RetentionDays); !cut.IsZero() && p.d.Conversations != nil {
		n, err := p.d.Conversations.PruneConversations(ctx, c.Name, cut, p.d.Batch)
		conversations = n
		errs = append(errs, err)
	}
	return interactions, conversations, errors.Join(errs...)
}

// Run passes right away, then once per value received from ticks, until
// ctx ends or ticks is closed. report (may be nil) is told the outcome of
// every pass; a failed pass does not stop the schedule.
func (p *Pruner) Run(ctx context.Context, ticks <-chan time.Time, report func(Report, error)) {
	schedule.Run(ctx, ticks, p.Pass, report)
}
