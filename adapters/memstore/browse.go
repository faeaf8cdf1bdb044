package memstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.InteractionBrowser = (*Store)(nil)

// List returns a page of the selection's interactions, newest first; the
// sequence number is the position in append order, counted from 1.
func (s *Store) List(_ context.Context, sel analytics.Selection, page chatlog.Page) (chatlog.Listing, error) {
	if err := page.Check(); err != nil {
		return chatlog.Listing{}, err
	}
	s.mu.RLock()
	entries := make([]chatlog.Entry, 0, len(s.interactions))
	for k, i := range s.interactions {
		if sel.Matches(i) {
			entries = append(entries, chatlog.Entry{Interaction: i, Seq: s.seqs[k]})
		}
	}
	s.mu.RUnlock()
	return chatlog.List(entries, sel, page), nil
}

// Daily counts the selection's interactions per UTC day.
func (s *Store) Daily(_ context.Context, sel analytics.Selection) ([]chatlog.DayCount, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return chatlog.Daily(s.interactions, sel), nil
}
