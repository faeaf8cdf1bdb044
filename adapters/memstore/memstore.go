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
	// seqs holds each interaction's sequence number, its position in
	// append order counted from 1, which a deletion does not change.
	seqs    []int64
	lastSeq int64
	// afterDeleteBatch, set by tests only, runs after each batch of
	// DeleteInteractions, outside the lock.
	afterDeleteBatch func()
	// ids holds the (CAT, interaction id) of every stored interaction
	// that has an id, as of when interactions had idsLen elements. Only
	// Append adds interactions and it keeps both in step, so a length that
	// differs means interactions were removed since (a deletion frees
	// their ids), and the set is rebuilt (storedIDs).
	ids    map[[2]string]struct{}
	idsLen int
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
	ids := s.storedIDs()
	stored := 0
	for _, i := range batch {
		if key, ok := i.DedupeKey(); ok {
			if _, dup := ids[key]; dup {
				continue
			}
			ids[key] = struct{}{}
		}
		s.interactions = append(s.interactions, i)
		s.lastSeq++
		s.seqs = append(s.seqs, s.lastSeq)
		stored++
	}
	s.idsLen = len(s.interactions)
	return stored, nil
}

// storedIDs returns the set of the stored interaction ids, rebuilt when
// interactions were removed since Append last kept it. Call it with the
// write lock held.
func (s *Store) storedIDs() map[[2]string]struct{} {
	if s.ids != nil && s.idsLen == len(s.interactions) {
		return s.ids
	}
	s.ids = map[[2]string]struct{}{}
	for _, i := range s.interactions {
		if key, ok := i.DedupeKey(); ok {
			s.ids[key] = struct{}{}
		}
	}
	return s.ids
}

// Answer counts the wanted parts of the query's answer with the core's
// reference, analytics.CountAnswer, under one read lock: one answer sees
// one state of the interactions.
func (s *Store) Answer(_ context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return analytics.CountAnswer(s.interactions, q, want), nil
}
