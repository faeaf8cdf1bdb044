package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
)

// AnalyticsSteps is how many schema steps the analytics component has.
var AnalyticsSteps = len(analyticsMigrations)

// OpenAtVersion opens the database with its analytics schema brought only
// to the given version, as an older release left it.
func OpenAtVersion(ctx context.Context, dsn string, version int) (*Store, error) {
	return open(ctx, dsn, analyticsMigrations[:version])
}

// InsertVersion1 stores interactions as version 1 of the schema did: raw
// rows without dictionary codes, and for api rows their dictionary
// entries and a daily rollup keyed by all five dimensions.
func InsertVersion1(ctx context.Context, s *Store, rows []analytics.Interaction) error {
	cols := rawColumns[:12] // without interaction_id and dims, which version 1 lacked
	ph := func(first, n int) string { return s.dialect.placeholders(first, n) }
	for _, i := range rows {
		i = i.Normalize()
		//nolint:gosec // fixed SQL text; the values are bound
		query := "INSERT INTO interactions (" + strings.Join(cols, ", ") + ") VALUES " + s.dialect.valuesClause(1, len(cols))
		if _, err := s.db.DB.ExecContext(ctx, query, s.dialect.timeArg(i.Time), i.Cat, i.EventKind, i.Question, i.Answer,
			i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID, i.UserID, i.ConversationID); err != nil {
			return err
		}
		if !i.Counted() {
			continue
		}
		var codes [5]int64
		for n, e := range entriesOf(i) {
			table := dictionaryTables[e.table]
			if _, err := s.db.DB.ExecContext(ctx, "INSERT INTO "+table+" (cat, digest, item_id, item_text) VALUES ("+ph(1, 4)+
				") ON CONFLICT (digest) DO NOTHING", e.cat, e.digest(), e.id, e.text); err != nil {
				return err
			}
			if err := s.db.DB.QueryRowContext(ctx, "SELECT code FROM "+table+" WHERE digest = "+ph(1, 1), e.digest()).Scan(&codes[n]); err != nil {
				return err
			}
		}
		if _, err := s.db.DB.ExecContext(ctx, "INSERT INTO rollup_daily (cat, day, topic_code, model_code, persona_code, "+
			"question_code, answer_code, hits) VALUES ("+ph(1, 8)+") ON CONFLICT (cat, day, topic_code, model_code, persona_code, "+
			"question_code, answer_code) DO UPDATE SET hits = rollup_daily.hits + excluded.hits",
			i.Cat, dayOf(i.Time), codes[0], codes[1], codes[2], codes[3], codes[4], 1); err != nil {
			return err
		}
	}
	return nil
}

// CheckSessionSettings is the check every new PostgreSQL connection passes.
var CheckSessionSettings = checkSessionSettings

// SetWriteTxHooks sets WriteTx's test hooks: before runs just before the
// commit, commit replaces tx.Commit (nil: the real one).
func SetWriteTxHooks(s *Store, before func(ctx context.Context, tx bun.Tx) error, commit func(tx bun.Tx) error) {
	s.beforeCommit, s.commit = before, commit
}

// TurnWait is how long WriteTx waits for SQLite's write lock.
const TurnWait = turnWait

// SetCompactAlways makes every PostgreSQL write that leaves a small code
// block merge its day's small blocks.
func SetCompactAlways(s *Store) { s.compactAlways = true }

// SetPassPlanned sets the hook a raw pass runs once it has planned its
// parts, before it takes more connections.
func SetPassPlanned(s *Store, hook func()) { s.passPlanned = hook }

// SetAfterDeleteBatch installs fn to run after each committed batch of
// DeleteInteractions.
func (s *Store) SetAfterDeleteBatch(fn func()) { s.afterDeleteBatch = fn }

// DeletionSteps is how many schema steps the deletion feed has.
var DeletionSteps = len(deletionMigrations)

// FunctionSteps is how many schema steps the database functions have.
var FunctionSteps = len(functionMigrations)

// DuplicateID is duplicateID: the error of a write that the unique index
// of interaction ids refused.
var DuplicateID = duplicateID

// PoolStats is the store's connection pool statistics.
func PoolStats(s *Store) sql.DBStats { return s.db.Stats() }
