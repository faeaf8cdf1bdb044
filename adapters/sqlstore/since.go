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
	last, err := s.readFeed(ctx, feedRead{after: after}, fn)
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
	_, err := s.readFeed(ctx, feedRead{cat: cat, upTo: upTo}, fn)
	return err
}

// feedColumns are the columns of a feed row, in feedScan.scan's order,
// after its id and time.
const feedColumns = ", cat, topic, model, persona, question_id, question, answer_id, answer" +
	", input_tokens, output_tokens, cost_nanos, COALESCE(latency_bucket + 1, 0), feedback_rating"

// ratedColumns are feedColumns with each question's and answer's id in
// place of its text and no usage: ReadRated's reader, the index's rated
// rows, counts rows by key. On SQLite they are all in the index
// interactions_rated (coveringRated).
const ratedColumns = ", cat, topic, model, persona, question_id, question_id, answer_id, answer_id, 0, 0, 0, 0, feedback_rating"

// feedQuery returns readFeed's statement and its arguments.
func (s *Store) feedQuery(fr feedRead) (string, []any) {
	micros := "occurred_at"
	if s.dialect == postgresDialect {
		micros = "CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"
	}
	columns := feedColumns
	if fr.rated {
		columns = ratedColumns
	}
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, " + micros + columns +
		" FROM interactions WHERE id > " + s.dialect.placeholders(1, 1) +
		" AND event_kind = " + s.dialect.placeholders(2, 1)
	args := []any{fr.after, analytics.EventKindAPI}
	if fr.cat != "" {
		args = append(args, fr.cat)
		query += " AND cat = " + s.dialect.placeholders(len(args), 1)
	}
	if fr.rated {
		// In the words of interactions_rated's condition, which the
		// planners match as written.
		query += " AND feedback_rating <> 0"
	}
	if fr.upTo > 0 {
		// upTo is a feed position: an id on SQLite, a transaction horizon
		// on PostgreSQL (feedorder.go), below which ReadSince has given
		// every row.
		args = append(args, fr.upTo)
		if s.dialect == postgresDialect {
			query += " AND xact < " + s.dialect.placeholders(len(args), 1)
		} else {
			query += " AND id <= " + s.dialect.placeholders(len(args), 1)
		}
	}
	return query + " ORDER BY id", args
}

// feedScan scans feed rows (feedColumns) into one FeedRow, whose values
// stay valid until the next scan.
type feedScan struct {
	r                                          analytics.FeedRow
	cat, topic, model, persona, qid, q, aid, a sql.RawBytes
}

func (f *feedScan) scan(rows *sql.Rows) error {
	r := &f.r
	if err := rows.Scan(&r.ID, &r.Micros, &f.cat, &f.topic, &f.model, &f.persona, &f.qid, &f.q, &f.aid, &f.a,
		&r.InputTokens, &r.OutputTokens, &r.CostNanos, &r.LatencyBucket, &r.Rating); err != nil {
		return internal(err)
	}
	r.Cat, r.Topic, r.Model, r.Persona = f.cat, f.topic, f.model, f.persona
	r.QuestionID, r.Question, r.AnswerID, r.Answer = f.qid, f.q, f.aid, f.a
	return nil
}

// feedRead selects the feed rows readFeed reads: ids in (after, upTo]
// (upTo 0: no bound), of one CAT or of all when cat is "", only the
// rated ones when rated.
type feedRead struct {
	cat         string
	after, upTo int64
	rated       bool
}

// readFeed streams the api interactions fr selects to fn in id order.
func (s *Store) readFeed(ctx context.Context, fr feedRead, fn func(*analytics.FeedRow) error) (int64, error) {
	query, args := s.feedQuery(fr)
	rows, err := s.db.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return fr.after, internal(err)
	}
	defer rows.Close()
	var f feedScan
	last := fr.after
	for rows.Next() {
		if err := f.scan(rows); err != nil {
			return last, err
		}
		if err := fn(&f.r); err != nil {
			return last, err
		}
		last = f.r.ID
	}
	if err := rows.Err(); err != nil {
		return last, internal(err)
	}
	return last, nil
}
