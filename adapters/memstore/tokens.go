package memstore

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/ports"
)

var _ ports.TokenUsage = (*Store)(nil)

// TokensSince sums the input and output tokens of the CAT's counted
// interactions at or after since (of one user's when userID is set), by
// a scan: fine for memory.
func (s *Store) TokensSince(_ context.Context, cat, userID string, since time.Time) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n int64
	for _, i := range s.interactions {
		if i.Cat != cat || !i.Counted() || i.Time.Before(since) || (userID != "" && i.UserID != userID) {
			continue
		}
		n += i.Usage.InputTokens + i.Usage.OutputTokens
	}
	return n, nil
}
