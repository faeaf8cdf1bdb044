package sqlstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// The reads of the ports, each retried as a whole (Retry) when its
// connection is lost: a dropped or reset connection costs a read a few
// milliseconds, not the request.

// Answer counts the wanted parts of the query's answer in the raw log
// (answer).
func (s *Store) Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	return Retry(ctx, func(ctx context.Context) (analytics.Counts, error) { return s.answer(ctx, q, want) })
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

// Answer counts the wanted parts of the query's answer for whole UTC days
// (answer).
func (r *Rollups) Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	return Retry(ctx, func(ctx context.Context) (analytics.Counts, error) { return r.answer(ctx, q, want) })
}

// ReadSince streams the api interactions stored since the position after
// to fn and returns the next position: on PostgreSQL the rows of the
// transactions that ended below the oldest still running
// (readSincePostgres, feedorder.go), on SQLite those above the id, in id
// order (readSince). A read cut short by a lost connection goes on after
// the last row fn was given, so fn sees each row once.
func (s *Store) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	if s.dialect == postgresDialect {
		return s.readSincePostgres(ctx, after, fn)
	}
	last := after
	for attempt := 1; ; attempt++ {
		var err error
		if last, err = s.readSince(ctx, last, fn); err == nil {
			return last, nil
		}
		if attempt == retryAttempts || !retryable(err) || ctx.Err() != nil || !sleep(ctx, backoff(attempt)) {
			return after, giveUp(err)
		}
	}
}

// ReadCat streams the CAT's api interactions with ids up to upTo, in id
// order, to fn (colindex.Deletions). A read cut short by a lost connection
// goes on after the last row fn was given, so fn sees each row once.
func (s *Store) ReadCat(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error {
	if upTo <= 0 {
		return nil
	}
	last := int64(0)
	for attempt := 1; ; attempt++ {
		var err error
		if last, err = s.readFeed(ctx, cat, last, upTo, fn); err == nil {
			return nil
		}
		if attempt == retryAttempts || !retryable(err) || ctx.Err() != nil || !sleep(ctx, backoff(attempt)) {
			return giveUp(err)
		}
	}
}
