package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// The rating feed (colindex.Ratings): a feed row's feedback can change
// after the feed gave it, so SetFeedback records, in its own transaction,
// the CAT of every api row whose rating it changes in rating_changes, as
// deletions record theirs in interaction_deletions (delete.go). The index
// polls the generations and reads the CAT's rated rows again (ReadRated).
// Reasons and comments are not in the feed: a change of those alone is
// not recorded.

// ratingFeed creates rating_changes, whose generation is the order the
// changes commit in (SQLite has one writer; on PostgreSQL setFeedback
// takes the table's lock first, so generations are drawn in commit
// order), and the index of the rated rows ReadRated reads.
func ratingFeed(d dialect) []string {
	serial := "INTEGER PRIMARY KEY"
	if d == postgresDialect {
		serial = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	return []string{
		`CREATE TABLE rating_changes (
			generation ` + serial + `,
			cat TEXT NOT NULL
		)`,
		`CREATE INDEX interactions_rated ON interactions (cat, id) WHERE feedback_rating <> 0`,
	}
}

// coveringRated makes interactions_rated hold, on SQLite, every column
// ReadRated reads (ratedColumns, its conditions), so that the index
// answers it without a read of each rated row's table page: the index's
// start-up and its re-read of a CAT whose ratings changed cost the rated
// rows, not random reads of the table. PostgreSQL keeps the narrow index:
// a B-tree entry there holds at most about 2.7 kB, less than the keys.
func coveringRated(d dialect) []string {
	if d == postgresDialect {
		return nil
	}
	return []string{
		`DROP INDEX interactions_rated`,
		`CREATE INDEX interactions_rated ON interactions (cat, id, event_kind, occurred_at, topic, model, persona,
			question_id, answer_id, feedback_rating) WHERE feedback_rating <> 0`,
	}
}

// setFeedback updates the interaction's feedback in tx and records a
// change of an api row's rating in rating_changes.
func (s *Store) setFeedback(ctx context.Context, tx *sql.Tx, cat, interactionID string, f analytics.Feedback) error {
	ph := s.dialect.placeholders
	if s.dialect == postgresDialect {
		// Held to the commit: the changes' generations are drawn and
		// committed one transaction at a time, in the same order.
		if _, err := tx.ExecContext(ctx, "LOCK TABLE rating_changes IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return internal(err)
		}
	}
	lockRow := ""
	if s.dialect == postgresDialect {
		lockRow = " FOR UPDATE"
	}
	var (
		id     int64
		kind   string
		before int
	)
	//nolint:gosec // fixed SQL text; the values are bound
	err := tx.QueryRowContext(ctx, "SELECT id, event_kind, feedback_rating FROM interactions WHERE cat = "+ph(1, 1)+
		" AND interaction_id = "+ph(2, 1)+lockRow, cat, interactionID).Scan(&id, &kind, &before)
	if errors.Is(err, sql.ErrNoRows) {
		return errs.New(errs.KindNotFound, "no interaction %q in CAT %q", clipName(interactionID), clipName(cat))
	}
	if err != nil {
		return internal(err)
	}
	rating := int(analytics.RatingCode(f.Rating))
	//nolint:gosec // fixed SQL text; the values are bound
	if _, err := tx.ExecContext(ctx, "UPDATE interactions SET feedback_rating = "+ph(1, 1)+", feedback_reason = "+ph(2, 1)+
		", feedback_comment = "+ph(3, 1)+" WHERE id = "+ph(4, 1), rating, f.Reason, f.Comment, id); err != nil {
		return internal(err)
	}
	if rating == before || kind != analytics.EventKindAPI {
		return nil
	}
	//nolint:gosec // fixed SQL text; the values are bound
	if _, err := tx.ExecContext(ctx, "INSERT INTO rating_changes (cat) VALUES ("+ph(1, 1)+")", cat); err != nil {
		return internal(err)
	}
	return nil
}

// ReadRatingChanges reports the rating changes committed after the
// generation after (colindex.Ratings): the highest generation (after
// itself when none) and the CATs whose api rows' ratings changed in them,
// sorted.
func (s *Store) ReadRatingChanges(ctx context.Context, after int64) (int64, []string, error) {
	return s.readGenerations(ctx, "rating_changes", after)
}

// ReadRated streams the CAT's api interactions with a rating that the
// feed had given by position upTo, in id order, to fn (colindex.Ratings):
// ReadCat's rows whose Rating is not 0, read through the index of rated
// rows alone: each question's and answer's id in place of its text, and
// no usage.
func (s *Store) ReadRated(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error {
	if upTo <= 0 {
		return nil
	}
	_, err := s.readFeed(ctx, feedRead{cat: cat, upTo: upTo, rated: true}, fn)
	return err
}

// writeFeedback is SetFeedback's transaction.
func (s *Store) writeFeedback(ctx context.Context, cat, interactionID string, f analytics.Feedback) error {
	return s.WriteTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		return s.setFeedback(ctx, tx.Tx, cat, interactionID, f)
	})
}
