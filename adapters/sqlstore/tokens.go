package sqlstore

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.TokenUsage = (*Store)(nil)

// TokensSince sums the input and output tokens of the CAT's api
// interactions at or after since, of one user's when userID is set: the
// agent's token budgets (cat.budget.*) ask it before each agent turn.
func (s *Store) TokensSince(ctx context.Context, cat, userID string, since time.Time) (int64, error) {
	ph := s.dialect.placeholders
	// Raw SQL: one SUM over the range (cat, occurred_at >= since) of the
	// partial index interactions_api_cat_time, whose predicate the
	// event_kind test repeats so the planner can use it.
	query := "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM interactions" +
		" WHERE cat = " + ph(1, 1) + " AND event_kind = '" + analytics.EventKindAPI + "' AND occurred_at >= " + ph(2, 1)
	args := []any{cat, s.dialect.timeArg(since)}
	if userID != "" {
		query += " AND user_id = " + ph(3, 1)
		args = append(args, userID)
	}
	var n int64
	if err := s.db.DB.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}
