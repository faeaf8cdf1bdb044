package sqlstore

import "context"

// Optimize refreshes the query planner's statistics of the analytics
// tables. Call it after a bulk import: until PostgreSQL's autovacuum gets
// round to it, the planner takes a freshly filled table for a few rows and
// picks plans for that (a bitmap scan with no parallel workers where a
// parallel scan is faster); SQLite keeps no statistics at all until asked.
func (s *Store) Optimize(ctx context.Context) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return internal(err)
	}
	defer conn.Close()
	if s.dialect == sqliteDialect {
		// Sample instead of reading every index in full (this connection).
		if _, err := conn.ExecContext(ctx, "PRAGMA analysis_limit = 1000"); err != nil {
			return internal(err)
		}
	}
	tables := append([]string{"interactions", "dims_blocks"}, dictionaryTables...)
	for _, t := range tables {
		stmt := "ANALYZE " + t // #nosec G202 -- table names come from this package's fixed list.
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return internal(err)
		}
	}
	return nil
}
