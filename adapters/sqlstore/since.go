package sqlstore

import (
	"context"
	"database/sql"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.InteractionFeed = (*Store)(nil)

// readSince streams the api interactions stored after the id, in id
// order, to fn (ports.InteractionFeed on SQLite, which the column index
// follows). SQLite runs one write transaction at a time, so ids commit in
// increasing order and a reader that remembers the last id it saw never
// misses a row. PostgreSQL writers commit concurrently: see feedorder.go.
func (s *Store) readSince(ctx context.Context, after int64, fn func(*ports.FeedRow) error) (int64, error) {
	micros := "occurred_at"
	if s.dialect == postgresDialect {
		micros = "CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"
	}
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, " + micros + ", cat, topic, model, persona, question_id, question, answer_id, answer" +
		" FROM interactions WHERE id > " + s.dialect.placeholders(1, 1) +
		" AND event_kind = " + s.dialect.placeholders(2, 1) + " ORDER BY id"
	rows, err := s.db.DB.QueryContext(ctx, query, after, analytics.EventKindAPI)
	if err != nil {
		return after, internal(err)
	}
	defer rows.Close()
	var (
		r                                          ports.FeedRow
		cat, topic, model, persona, qid, q, aid, a sql.RawBytes
	)
	last := after
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.Micros, &cat, &topic, &model, &persona, &qid, &q, &aid, &a); err != nil {
			return last, internal(err)
		}
		r.Cat, r.Topic, r.Model, r.Persona = cat, topic, model, persona
		r.QuestionID, r.Question, r.AnswerID, r.Answer = qid, q, aid, a
		if err := fn(&r); err != nil {
			return last, err
		}
		last = r.ID
	}
	if err := rows.Err(); err != nil {
		return last, internal(err)
	}
	return last, nil
}
