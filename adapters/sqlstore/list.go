package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/ports"
)

// This file is the chat-log view of the raw log (ports.InteractionBrowser).
// Its queries are its own, so that changes to the counting queries cannot
// change what the chat log lists.

var _ ports.InteractionBrowser = (*Store)(nil)

// microsPerDay converts SQLite's integer microseconds to days.
const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// listColumns are the raw columns a listing reads, in scan order.
const listColumns = "id, occurred_at, question, answer, topic, model, persona, question_id, answer_id, user_id, conversation_id, interaction_id" + usageListColumns

// List returns a page of the selection's interactions, newest first, ties
// broken by descending row id.
func (s *Store) List(ctx context.Context, sel analytics.Selection, page chatlog.Page) (chatlog.Listing, error) {
	if err := page.Check(); err != nil {
		return chatlog.Listing{}, err
	}
	q, ok := s.browseWhere(sel)
	if !ok {
		return chatlog.Listing{}, nil
	}
	q = reviewWhere(q, page.Review)
	if !page.After.IsZero() {
		at := s.browseTime(page.After.Time)
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("occurred_at < ?", at).
				WhereOr("occurred_at = ? AND id < ?", at, page.After.Seq)
		})
	}
	q = q.ColumnExpr(listColumns).OrderExpr("occurred_at DESC, id DESC").Limit(int64(page.Limit) + 1)
	rows, err := q.Rows(ctx)
	if err != nil {
		return chatlog.Listing{}, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []chatlog.Entry
	for rows.Next() {
		e, err := s.scanEntry(rows, sel.Cat)
		if err != nil {
			return chatlog.Listing{}, internal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return chatlog.Listing{}, internal(err)
	}
	if len(out) <= page.Limit {
		return chatlog.Listing{Entries: out}, nil
	}
	out = out[:page.Limit]
	return chatlog.Listing{Entries: out, Next: chatlog.PositionOf(out[len(out)-1])}, nil
}

// scanEntry reads one row of listColumns.
func (s *Store) scanEntry(rows *sql.Rows, cat string) (chatlog.Entry, error) {
	e := chatlog.Entry{Interaction: analytics.Interaction{Cat: cat, EventKind: analytics.EventKindAPI}}
	var micros int64
	var at time.Time
	var timeDest any = &micros
	if s.dialect == postgresDialect {
		timeDest = &at
	}
	i := &e.Interaction
	var id sql.NullString
	usage, finish := usageDests(i)
	if err := rows.Scan(append([]any{&e.Seq, timeDest, &i.Question, &i.Answer, &i.Topic, &i.Model, &i.Persona,
		&i.QuestionID, &i.AnswerID, &i.UserID, &i.ConversationID, &id}, usage...)...); err != nil {
		return chatlog.Entry{}, err
	}
	i.InteractionID = id.String
	finish()
	if s.dialect == postgresDialect {
		i.Time = at.UTC()
	} else {
		i.Time = time.UnixMicro(micros).UTC()
	}
	return e, nil
}

// dayRow is one day of the daily series as the query returns it.
type dayRow struct {
	Day   int64 `bun:"day_number"`
	Count int64 `bun:"day_count"`
}

// Daily counts the selection's interactions per UTC day.
func (s *Store) Daily(ctx context.Context, sel analytics.Selection) ([]chatlog.DayCount, error) {
	q, ok := s.browseWhere(sel)
	if !ok {
		return nil, nil
	}
	// Days since the epoch, rounded down also before 1970.
	dayExpr := "CASE WHEN occurred_at >= 0 THEN occurred_at / ? ELSE -((-occurred_at - 1) / ?) - 1 END"
	args := []any{microsPerDay, microsPerDay}
	if s.dialect == postgresDialect {
		dayExpr, args = "((occurred_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01')", nil
	}
	var rows []dayRow
	err := q.ColumnExpr(dayExpr+" AS day_number", args...).
		ColumnExpr("COUNT(*) AS day_count").
		GroupExpr("day_number").
		OrderExpr("day_number").
		Scan(ctx, &rows)
	if err != nil {
		return nil, internal(err)
	}
	out := make([]chatlog.DayCount, len(rows))
	for k, r := range rows {
		out[k] = chatlog.DayCount{Day: time.Unix(r.Day*86400, 0).UTC(), Count: r.Count}
	}
	return out, nil
}

// browseWhere starts a query over the raw api rows of the selection. ok is
// false when the selection matches nothing without asking the database.
func (s *Store) browseWhere(sel analytics.Selection) (*bun.SelectQuery, bool) {
	sel, ok := chatlog.Storable(sel)
	if !ok {
		return nil, false
	}
	q := s.db.NewSelect().TableExpr("interactions").
		Where("cat = ?", sel.Cat).
		Where("event_kind = ?", analytics.EventKindAPI)
	if !sel.Range.Start.IsZero() {
		q = q.Where("occurred_at >= ?", s.browseTime(sel.Range.Start))
	}
	if !sel.Range.End.IsZero() {
		q = q.Where("occurred_at < ?", s.browseTime(sel.Range.End))
	}
	columns := map[analytics.Dimension]string{
		analytics.Topic: "topic", analytics.Model: "model", analytics.Persona: "persona",
		analytics.Question: "question_id", analytics.Answer: "answer_id",
	}
	for _, d := range analytics.Dimensions {
		if vals := sel.Filters.Values(d); len(vals) > 0 {
			q = q.Where("? IN (?)", bun.Ident(columns[d]), bun.List(vals))
		}
	}
	return q, true
}

// browseTime is a point in time as the time column stores it: TIMESTAMPTZ
// on PostgreSQL, integer microseconds on SQLite. Range bounds are whole
// days and cursors come from stored rows, so nothing is lost.
func (s *Store) browseTime(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if s.dialect == postgresDialect {
		return t
	}
	return t.UnixMicro()
}
