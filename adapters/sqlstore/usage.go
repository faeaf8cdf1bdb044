package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// This file holds usage and feedback: the counts of /usage and /feedback
// (ports.UsageCounter) and the feedback of an interaction
// (ports.FeedbackRecorder). Each interaction row carries its usage, with
// its cost in 1e-9 USD (cost_nanos) and its latency's bucket
// (latency_bucket) computed in Go when it is written, so that the
// database sums and groups exactly what the reference does.

var (
	_ ports.UsageCounter     = (*Store)(nil)
	_ ports.FeedbackRecorder = (*Store)(nil)
)

// usageMigration adds the usage and feedback columns.
func usageColumns(d dialect) []string {
	float := "REAL"
	if d == postgresDialect {
		float = "DOUBLE PRECISION"
	}
	return []string{
		`ALTER TABLE interactions ADD COLUMN input_tokens BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ADD COLUMN cost_usd ` + float + ` NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ADD COLUMN cost_nanos BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ADD COLUMN latency_ms ` + float,
		`ALTER TABLE interactions ADD COLUMN latency_bucket INTEGER`,
		`ALTER TABLE interactions ADD COLUMN first_token_ms ` + float,
		`ALTER TABLE interactions ADD COLUMN feedback_rating SMALLINT NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ADD COLUMN feedback_reason TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE interactions ADD COLUMN feedback_comment TEXT NOT NULL DEFAULT ''`,
	}
}

// usageRawColumns are the usage and feedback columns of an insert, in
// usageArgs order.
var usageRawColumns = []string{"input_tokens", "output_tokens", "cost_usd", "cost_nanos", "latency_ms", "latency_bucket",
	"first_token_ms", "feedback_rating", "feedback_reason", "feedback_comment"}

// usageArgs appends an interaction's usage and feedback values.
func usageArgs(args []any, i analytics.Interaction) []any {
	u, f := i.Usage, i.Feedback
	var latency, bucket, first any
	if u.LatencyMS != nil {
		latency, bucket = *u.LatencyMS, analytics.LatencyBucket(*u.LatencyMS)
	}
	if u.FirstTokenMS != nil {
		first = *u.FirstTokenMS
	}
	return append(args, u.InputTokens, u.OutputTokens, u.CostUSD, analytics.CostNanos(u.CostUSD), latency, bucket, first,
		int(analytics.RatingCode(f.Rating)), f.Reason, f.Comment)
}

// usageListColumns are the usage and feedback columns a listing reads.
const usageListColumns = ", input_tokens, output_tokens, cost_usd, latency_ms, first_token_ms, feedback_rating, feedback_reason, feedback_comment"

// usageDests returns where a listing scans an entry's usage columns;
// finish puts them in the interaction once scanned.
func usageDests(i *analytics.Interaction) (dests []any, finish func()) {
	var latency, first sql.NullFloat64
	var rating int
	dests = []any{&i.Usage.InputTokens, &i.Usage.OutputTokens, &i.Usage.CostUSD, &latency, &first, &rating,
		&i.Feedback.Reason, &i.Feedback.Comment}
	return dests, func() {
		if latency.Valid {
			i.Usage.LatencyMS = analytics.MS(latency.Float64)
		}
		if first.Valid {
			i.Usage.FirstTokenMS = analytics.MS(first.Float64)
		}
		switch uint8(rating) {
		case analytics.RatingCodeUp:
			i.Feedback.Rating = analytics.RatingUp
		case analytics.RatingCodeDown:
			i.Feedback.Rating = analytics.RatingDown
		}
	}
}

// reviewWhere restricts a listing to a review queue.
func reviewWhere(q *bun.SelectQuery, r chatlog.Review) *bun.SelectQuery {
	switch r.Kind {
	case chatlog.ReviewDown:
		return q.Where("feedback_rating = ?", int(analytics.RatingCodeDown))
	case chatlog.ReviewUnanswered:
		return q.Where("answer = ?", r.DefaultAnswer)
	}
	return q
}

// SetFeedback sets the feedback of the CAT's interaction with the id, seen
// by every read that starts after it returns (usage counts are read from
// the rows), and records a change of its rating in the rating feed, in
// one transaction (ratings.go).
func (s *Store) SetFeedback(ctx context.Context, cat, interactionID string, f analytics.Feedback) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if interactionID == "" || analytics.CheckText("cat", cat) != nil || analytics.CheckText("interaction_id", interactionID) != nil {
		return errs.New(errs.KindNotFound, "no such interaction")
	}
	return s.writeFeedback(ctx, cat, interactionID, f)
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// usageRow is one (group, latency bucket) of the usage query.
type usageRow struct {
	Key    sql.NullString `bun:"group_key"`
	Day    sql.NullInt64  `bun:"group_day"`
	Bucket sql.NullInt64  `bun:"bucket"`
	N      int64          `bun:"n"`
	In     int64          `bun:"input_tokens"`
	Out    int64          `bun:"output_tokens"`
	Cost   int64          `bun:"cost_nanos"`
	Up     int64          `bun:"up"`
	Down   int64          `bun:"down"`
}

// CountUsage counts the selection's usage and feedback in the database:
// one GROUP BY (group, latency bucket) read in one statement, merged in Go
// into each group's stats and the total.
func (s *Store) CountUsage(ctx context.Context, q analytics.UsageQuery) (analytics.UsageCounts, error) {
	return s.countUsage(ctx, q)
}

func (s *Store) countUsage(ctx context.Context, uq analytics.UsageQuery) (analytics.UsageCounts, error) {
	q, ok := s.browseWhere(uq.Selection())
	if !ok {
		return analytics.UsageCounts{}, nil
	}
	switch uq.GroupBy {
	case analytics.GroupModel:
		q = q.ColumnExpr("model AS group_key")
	case analytics.GroupPersona:
		q = q.ColumnExpr("persona AS group_key")
	case analytics.GroupTopic:
		q = q.ColumnExpr("topic AS group_key")
	case analytics.GroupDay:
		dayExpr := "CASE WHEN occurred_at >= 0 THEN occurred_at / ? ELSE -((-occurred_at - 1) / ?) - 1 END"
		args := []any{microsPerDay, microsPerDay}
		if s.dialect == postgresDialect {
			dayExpr, args = "((occurred_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01')", nil
		}
		q = q.ColumnExpr(dayExpr+" AS group_day", args...)
	}
	q = q.ColumnExpr("latency_bucket AS bucket").
		ColumnExpr("COUNT(*) AS n").
		ColumnExpr("CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input_tokens").
		ColumnExpr("CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS output_tokens").
		ColumnExpr("CAST(COALESCE(SUM(cost_nanos), 0) AS BIGINT) AS cost_nanos").
		ColumnExpr("CAST(SUM(CASE WHEN feedback_rating = ? THEN 1 ELSE 0 END) AS BIGINT) AS up", int(analytics.RatingCodeUp)).
		ColumnExpr("CAST(SUM(CASE WHEN feedback_rating = ? THEN 1 ELSE 0 END) AS BIGINT) AS down", int(analytics.RatingCodeDown))
	switch uq.GroupBy {
	case analytics.GroupNone:
		q = q.GroupExpr("bucket")
	case analytics.GroupDay:
		q = q.GroupExpr("group_day, bucket")
	default:
		q = q.GroupExpr("group_key, bucket")
	}
	var rows []usageRow
	if err := q.Scan(ctx, &rows); err != nil {
		return analytics.UsageCounts{}, internal(err)
	}
	var total analytics.UsageSum
	groups := map[string]*analytics.UsageSum{}
	var order []string
	for _, r := range rows {
		sums := []*analytics.UsageSum{&total}
		if uq.GroupBy != analytics.GroupNone {
			key := r.Key.String
			if uq.GroupBy == analytics.GroupDay {
				key = time.Unix(r.Day.Int64*86400, 0).UTC().Format(analytics.DateLayout)
			}
			g := groups[key]
			if g == nil {
				g = &analytics.UsageSum{}
				groups[key] = g
				order = append(order, key)
			}
			sums = append(sums, g)
		}
		for _, sum := range sums {
			sum.Interactions += r.N
			sum.InputTokens += r.In
			sum.OutputTokens += r.Out
			sum.CostNanos += r.Cost
			sum.Up += r.Up
			sum.Down += r.Down
			if r.Bucket.Valid {
				sum.Latency.AddCount(int(r.Bucket.Int64), r.N)
			}
		}
	}
	out := analytics.UsageCounts{Total: total.Stats()}
	for _, k := range order {
		out.Groups = append(out.Groups, analytics.UsageGroup{Key: k, UsageStats: groups[k].Stats()})
	}
	return out, nil
}
