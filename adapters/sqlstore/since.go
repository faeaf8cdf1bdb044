package sqlstore

import (
	"context"
	"database/sql"

	"github.com/catsrv/catsrv/core/analytics"
)

// ReadSince streams the api interactions stored since the position after
// to fn and returns the next position (colindex.Feed). On SQLite the
// position is an id: SQLite runs one write transaction at a time, so ids
// commit in increasing order and a reader that remembers the last id it
// saw never misses a row. PostgreSQL writers commit concurrently: there
// the position is a transaction horizon (readSincePostgres, feedorder.go).
func (s *Store) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	if s.dialect == postgresDialect {
		return s.readSincePostgres(ctx, after, fn)
	}
	last, err := s.readFeed(ctx, "", after, 0, fn)
	if err != nil {
		return after, err
	}
	return last, nil
}

// ReadCat streams the CAT's api interactions the feed had given by
// position upTo, in id order, to fn (colindex.Deletions).
func (s *Store) ReadCat(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error {
	if upTo <= 0 {
		return nil
	}
	_, err := s.readFeed(ctx, cat, 0, upTo, fn)
	return err
}

// readFeed streams the api interactions with ids in (after, upTo] (upTo 0:
// no bound) to fn in id order: of one CAT, or of all when cat is "".
func (s *Store) readFeed(ctx context.Context, cat string, after, upTo int64, fn func(*analytics.FeedRow) error) (int64, error) {
	micros := "occurred_at"
	if s.dialect == postgresDialect {
		micros = "CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"
	}
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, " + micros + ", cat, topic, model, persona, question_id, question, answer_id, answer" +
		" FROM interactions WHERE id > " + s.dialect.placeholders(1, 1) +
		" AND event_kind = " + s.dialect.placeholders(2, 1)
	args := []any{after, analytics.EventKindAPI}
	if cat != "" {
		args = append(args, cat)
		query += " AND cat = " + s.dialect.placeholders(len(args), 1)
	}
	if upTo > 0 {
		// upTo is a feed position: an id on SQLite, a transaction horizon
		// on PostgreSQL (feedorder.go), below which ReadSince has given
		// every row.
		args = append(args, upTo)
		if s.dialect == postgresDialect {
			query += " AND xact < " + s.dialect.placeholders(len(args), 1)
		} else {
			query += " AND id <= " + s.dialect.placeholders(len(args), 1)
		}
	}
	rows, err := s.db.DB.QueryContext(ctx, query+" ORDER BY id", args...)
	if err != nil {
		return after, internal(err)
	}
	defer rows.Close()
	var (
		r                                             analytics.FeedRow
		rowCat, topic, model, persona, qid, q, aid, a sql.RawBytes
	)
	last := after
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.Micros, &rowCat, &topic, &model, &persona, &qid, &q, &aid, &a); err != nil {
			return last, internal(err)
		}
		r.Cat, r.Topic, r.Model, r.Persona = rowCat, topic, model, persona
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
