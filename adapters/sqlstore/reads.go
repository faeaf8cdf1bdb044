package sqlstore

import (
	"context"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// The reads of the ports, each retried as a whole (Retry) when its
// connection is lost: a dropped or reset connection costs a read a few
// milliseconds, not the request.

// Total counts the selection's interactions in the raw log (total).
func (s *Store) Total(ctx context.Context, sel analytics.Selection) (int64, error) {
	return Retry(ctx, func(ctx context.Context) (int64, error) { return s.total(ctx, sel) })
}

// Groups counts the selection's interactions in the raw log per distinct
// key and text of the dimension (groups).
func (s *Store) Groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	return Retry(ctx, func(ctx context.Context) ([]analytics.Group, error) { return s.groups(ctx, sel, d) })
}

// TopGroups returns the first n groups of the dimension in
// analytics.SortGroups order (topGroups).
func (s *Store) TopGroups(ctx context.Context, sel analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error) {
	return Retry(ctx, func(ctx context.Context) ([]analytics.Group, error) { return s.topGroups(ctx, sel, d, n) })
}

// List returns a page of the selection's interactions, newest first
// (list).
func (s *Store) List(ctx context.Context, sel analytics.Selection, page chatlog.Page) (chatlog.Listing, error) {
	return Retry(ctx, func(ctx context.Context) (chatlog.Listing, error) { return s.list(ctx, sel, page) })
}

// Daily counts the selection's interactions per UTC day (daily).
func (s *Store) Daily(ctx context.Context, sel analytics.Selection) ([]chatlog.DayCount, error) {
	return Retry(ctx, func(ctx context.Context) ([]chatlog.DayCount, error) { return s.daily(ctx, sel) })
}

// Total counts the selection's interactions from the rollups (total).
func (r *Rollups) Total(ctx context.Context, sel analytics.Selection) (int64, error) {
	return Retry(ctx, func(ctx context.Context) (int64, error) { return r.total(ctx, sel) })
}

// Groups counts the selection's interactions per distinct key and text of
// the dimension (groups).
func (r *Rollups) Groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	return Retry(ctx, func(ctx context.Context) ([]analytics.Group, error) { return r.groups(ctx, sel, d) })
}

// TopGroups returns the first n groups of the dimension in
// analytics.SortGroups order (topGroups).
func (r *Rollups) TopGroups(ctx context.Context, sel analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error) {
	return Retry(ctx, func(ctx context.Context) ([]analytics.Group, error) { return r.topGroups(ctx, sel, d, n) })
}

// ReadSince streams the api interactions stored after the id, in id
// order, to fn (readSince). A read cut short by a lost connection goes on
// after the last row fn was given, so fn sees each row once.
func (s *Store) ReadSince(ctx context.Context, after int64, fn func(*colindex.Row) error) (int64, error) {
	last := after
	for attempt := 1; ; attempt++ {
		var err error
		if last, err = s.readSince(ctx, last, fn); err == nil {
			return last, nil
		}
		if attempt == retryAttempts || !retryable(err) || ctx.Err() != nil || !sleep(ctx, backoff(attempt)) {
			return last, giveUp(err)
		}
	}
}
