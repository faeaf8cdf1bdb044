// Package memstore keeps interactions in memory. It is the reference
// adapter: its counts come straight from the core's reference aggregation,
// and every other adapter's contract tests compare against it. It also
// serves programs that import the core as a library and need no database.
package memstore

import (
	"context"
	"iter"
	"sync"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Store holds interactions in memory. Safe for concurrent use. It is both
// the interaction log and its own rollup store: with no separate rollups,
// the two can never disagree.
type Store struct {
	mu           sync.RWMutex
	interactions []analytics.Interaction
	// ids holds the (CAT, interaction id) of every stored interaction
	// that has an id.
	ids map[[2]string]struct{}
}

// New returns an empty store.
func New() *Store { return &Store{} }

// Append stores the interactions, normalized; nothing if the sequence
// yields an error or an interaction is invalid. An interaction whose
// (CAT, interaction id) is already stored, or came earlier in the same
// sequence, is skipped and not counted.
func (s *Store) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	var batch []analytics.Interaction
	for i, err := range interactions {
		if err != nil {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := i.Validate(); err != nil {
			return 0, errs.New(errs.KindInvalid, "interaction %d: %s", len(batch)+1, errs.PublicMessage(err, "invalid"))
		}
		batch = append(batch, i.Normalize())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := 0
	for _, i := range batch {
		if key, ok := i.DedupeKey(); ok {
			if _, dup := s.ids[key]; dup {
				continue
			}
			if s.ids == nil {
				s.ids = map[[2]string]struct{}{}
			}
			s.ids[key] = struct{}{}
		}
		s.interactions = append(s.interactions, i)
		stored++
	}
	return stored, nil
}

// Answer counts the wanted parts of the query's answer with the core's
// reference, analytics.CountAnswer, under one read lock: one answer sees
// one state of the interactions.
func (s *Store) Answer(_ context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return analytics.CountAnswer(s.interactions, q, want), nil
}
