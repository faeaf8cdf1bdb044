package memstore

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/ports"
)

var _ ports.ConversationPruner = (*Conversations)(nil)

// PruneConversations deletes the CAT's conversations last active before
// `before`, with their messages, at most batch per hold of the lock
// (batch <= 0: DefaultDeleteBatch), and returns how many.
func (s *Conversations) PruneConversations(ctx context.Context, cat string, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultDeleteBatch
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n := s.pruneBatch(cat, before, batch)
		total += n
		if n < batch {
			return total, nil
		}
	}
}

func (s *Conversations) pruneBatch(cat string, before time.Time, limit int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, c := range s.convs {
		if n == limit {
			break
		}
		if c.c.Owner.Cat == cat && c.c.UpdatedAt.Before(before) {
			delete(s.convs, id)
			n++
		}
	}
	return n
}
