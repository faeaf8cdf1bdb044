package sqlstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
)

// CountSince counts the api interactions a follower of the feed at
// position after (ReadSince's; the column index's) has yet to read: on
// SQLite the rows with an id above it, on PostgreSQL the rows of
// transactions at or above its horizon (feedorder.go), in one read.
func (s *Store) CountSince(ctx context.Context, after int64) (int64, error) {
	column := "id > "
	if s.dialect == postgresDialect {
		column = "xact >= "
	}
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT count(*) FROM interactions WHERE " + column + s.dialect.placeholders(1, 1) +
		" AND event_kind = " + s.dialect.placeholders(2, 1)
	var n int64
	if err := s.db.DB.QueryRowContext(ctx, query, after, analytics.EventKindAPI).Scan(&n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}
