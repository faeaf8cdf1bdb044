package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
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

// hooksOf returns the store's test hooks, creating them.
func hooksOf(s *Store) *testHooks {
	if s.hooks == nil {
		s.hooks = &testHooks{}
	}
	return s.hooks
}

// SetWriteTxHooks sets WriteTx's test hooks: before runs just before the
// commit, commit replaces tx.Commit (nil: the real one).
func SetWriteTxHooks(s *Store, before func(ctx context.Context, tx bun.Tx) error, commit func(tx bun.Tx) error) {
	hooksOf(s).beforeCommit, hooksOf(s).commit = before, commit
}

// TurnWait is how long WriteTx waits for SQLite's write lock.
const TurnWait = turnWait

// SetCompactAlways makes every PostgreSQL write that leaves a small code
// block merge its day's small blocks, in every store of the test binary,
// until the test ends.
func SetCompactAlways(t interface{ Cleanup(func()) }) {
	before := compactEvery
	compactEvery = 1
	t.Cleanup(func() { compactEvery = before })
}

// SetPassPlanned sets the hook a raw pass runs once it has planned its
// parts, before it takes more connections.
func SetPassPlanned(s *Store, hook func()) { hooksOf(s).passPlanned = hook }

// SetAfterDeleteBatch installs fn to run after each committed batch of
// DeleteInteractions.
func (s *Store) SetAfterDeleteBatch(fn func()) { hooksOf(s).afterDeleteBatch = fn }

// DeletionSteps is how many schema steps the deletion feed has.
var DeletionSteps = len(deletionMigrations)

// FunctionSteps is how many schema steps the database functions have.
var FunctionSteps = len(functionMigrations)

// DuplicateID is duplicateID: the error of a write that the unique index
// of interaction ids refused.
var DuplicateID = duplicateID

// PoolStats is the store's connection pool statistics.
func PoolStats(s *Store) sql.DBStats { return s.db.Stats() }

// OpenLegacy opens the database with its schema made as the releases
// before bun's migrator made it (their Migrate, below): the analytics
// component brought to the given version, the others to their latest.
func OpenLegacy(ctx context.Context, dsn string, version int) (*Store, error) {
	s, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	for component, steps := range map[string][]Migration{
		analyticsComponent: analyticsMigrations[:version], deletionsComponent: deletionMigrations, functionsComponent: functionMigrations,
	} {
		if err := legacyMigrate(ctx, s, component, steps); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// legacyMigrate is Migrate as of commit e049dc0: the steps recorded by
// (component, version) in schema_migrations, all in one transaction.
func legacyMigrate(ctx context.Context, s *Store, component string, steps []Migration) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if s.dialect == postgresDialect {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))", lockMigrate); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			component TEXT NOT NULL,
			version INTEGER NOT NULL,
			name TEXT NOT NULL,
			PRIMARY KEY (component, version)
		)`); err != nil {
			return err
		}
		var current sql.NullInt64
		if err := tx.NewSelect().TableExpr("schema_migrations").ColumnExpr("MAX(version)").
			Where("component = ?", component).Scan(ctx, &current); err != nil {
			return err
		}
		for _, m := range steps {
			if m.Version <= int(current.Int64) {
				continue
			}
			for _, stmt := range m.Statements(s.dialect.String()) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			if m.Backfill != nil {
				if err := m.Backfill(ctx, tx, s.dialect.String()); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (component, version, name) VALUES (?, ?, ?)", component, m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
}

// AppendLegacy appends to a store opened by OpenLegacy at a version
// before the usage columns: the writer of today writes them, so they are
// added for the append and dropped again, leaving the legacy schema.
func AppendLegacy(ctx context.Context, s *Store, rows []analytics.Interaction) error {
	for _, stmt := range usageColumns(s.dialect) {
		if _, err := s.db.DB.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if _, err := s.Append(ctx, analytics.Each(rows)); err != nil {
		return err
	}
	for _, col := range usageRawColumns {
		if _, err := s.db.DB.ExecContext(ctx, "ALTER TABLE interactions DROP COLUMN "+col); err != nil {
			return err
		}
	}
	return nil
}

// storedBlock is a row of dims_blocks.
type storedBlock struct {
	cat        string
	day, block int64
	data       []byte
}

func readBlocks(ctx context.Context, s *Store) ([]storedBlock, error) {
	rows, err := s.db.DB.QueryContext(ctx, "SELECT cat, day, block, data FROM dims_blocks")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var blocks []storedBlock
	for rows.Next() {
		var b storedBlock
		if err := rows.Scan(&b.cat, &b.day, &b.block, &b.data); err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, rows.Err()
}

// StripBlockUsage rewrites every block in the record layout before usage
// (time and codes only), as version 8 of the schema left them.
func StripBlockUsage(ctx context.Context, s *Store) error {
	blocks, err := readBlocks(ctx, s)
	if err != nil {
		return err
	}
	ph := s.dialect.placeholders
	for _, b := range blocks {
		var old []byte
		for data := b.data; len(data) > 0; {
			for k := range 1 + dimsCodes + blockUsageFields {
				_, n := binary.Uvarint(data)
				if n <= 0 {
					return errCorruptDims
				}
				if k <= dimsCodes {
					old = append(old, data[:n]...)
				}
				data = data[n:]
			}
		}
		if _, err := s.db.DB.ExecContext(ctx, "UPDATE dims_blocks SET data = "+ph(1, 1)+" WHERE cat = "+ph(2, 1)+
			" AND day = "+ph(3, 1)+" AND block = "+ph(4, 1), old, b.cat, b.day, b.block); err != nil {
			return err
		}
	}
	return nil
}
