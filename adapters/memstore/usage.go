package memstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.UsageCounter     = (*Store)(nil)
	_ ports.FeedbackRecorder = (*Store)(nil)
)

// CountUsage counts usage and feedback with the core's reference,
// analytics.CountUsage, under one read lock.
func (s *Store) CountUsage(_ context.Context, q analytics.UsageQuery) (analytics.UsageCounts, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return analytics.CountUsage(s.interactions, q), nil
}

// SetFeedback replaces the feedback of the CAT's interaction with the id
// (a zero Feedback removes it), under the write lock: every later read
// counts it.
func (s *Store) SetFeedback(ctx context.Context, cat, interactionID string, f analytics.Feedback) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.interactions {
		if i := &s.interactions[k]; i.InteractionID == interactionID && i.Cat == cat && interactionID != "" {
			i.Feedback = f
			return nil
		}
	}
	return errs.New(errs.KindNotFound, "no interaction %q in CAT %q", clip(interactionID), clip(cat))
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
