package memstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.InteractionEraser = (*Store)(nil)

// DefaultDeleteBatch is how many interactions a deletion removes per batch
// when its caller names no batch size.
const DefaultDeleteBatch = 1000

// DeleteInteractions deletes the interactions d selects
// (analytics.Deletion.Selects), in append order, at most batch of them
// per hold of the write lock (batch <= 0: DefaultDeleteBatch), so readers
// see each batch whole and are never held up for the whole deletion. It
// stops between batches when ctx ends, returning what it deleted so far
// and ctx's error.
func (s *Store) DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	if batch <= 0 {
		batch = DefaultDeleteBatch
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n := s.deleteBatch(d, batch)
		total += n
		if n == 0 {
			return total, nil
		}
		if s.afterDeleteBatch != nil {
			s.afterDeleteBatch()
		}
		if n < batch {
			return total, nil
		}
	}
}

// deleteBatch removes the first (at most) limit interactions d selects.
func (s *Store) deleteBatch(d analytics.Deletion, limit int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept, seqs := s.interactions[:0], s.seqs[:0]
	n := 0
	for k, i := range s.interactions {
		if n < limit && d.Selects(i) {
			n++
			continue
		}
		kept, seqs = append(kept, i), append(seqs, s.seqs[k])
	}
	clear(s.interactions[len(kept):])
	s.interactions, s.seqs = kept, seqs
	if n > 0 {
		s.ids = nil // the deleted ids are free again: storedIDs rebuilds
	}
	return n
}
