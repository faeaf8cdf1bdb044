package sqlstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
)

// CountSince counts the api interactions stored with an id above after:
// how many rows a follower whose high-water mark is after (the column
// index) has yet to read. One read, not retried: it serves monitoring,
// where a failed read is better reported than waited for.
func (s *Store) CountSince(ctx context.Context, after int64) (int64, error) {
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT count(*) FROM interactions WHERE id > " + s.dialect.placeholders(1, 1) +
		" AND event_kind = " + s.dialect.placeholders(2, 1)
	var n int64
	if err := s.db.DB.QueryRowContext(ctx, query, after, analytics.EventKindAPI).Scan(&n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}
