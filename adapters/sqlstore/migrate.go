package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/errs"
)

// Migration is one step of a component's schema. Steps are applied in
// order, each once; a database records the (component, version) pairs it
// has in schema_migrations. Statements gets the dialect name (DialectSQLite
// or DialectPostgres).
type Migration struct {
	Version    int
	Name       string
	Statements func(dialect string) []string
	// Backfill, when set, runs after the statements in the same
	// transaction: data changes SQL alone cannot express.
	Backfill func(ctx context.Context, tx bun.Tx, dialect string) error
}

// analyticsComponent names this package's own schema in schema_migrations.
const analyticsComponent = "analytics"

// analyticsMigrations is the analytics schema's history. Append new steps;
// never edit one that has shipped.
var analyticsMigrations = []Migration{
	{Version: 1, Name: "interactions and daily rollups", Statements: func(d string) []string { return analyticsSchema(dialectNamed(d)) }},
	{Version: 2, Name: "dictionary codes in the raw rows", Statements: func(d string) []string { return addDims(dialectNamed(d)) }, Backfill: backfillDims},
	{Version: 3, Name: "column-wise blocks of the raw codes", Statements: func(d string) []string { return blocksTable(dialectNamed(d)) },
		Backfill: func(ctx context.Context, tx bun.Tx, d string) error {
			return backfillBlocks(ctx, tx.Tx, dialectNamed(d))
		}},
	{Version: 4, Name: "rollups per topic, model and persona", Statements: func(d string) []string { return cubeRollups(dialectNamed(d)) }},
	{Version: 5, Name: "interaction ids, unique per CAT", Statements: func(string) []string { return interactionIDs() }},
	{Version: 6, Name: "feed order by writing transaction", Statements: func(d string) []string { return feedOrder(dialectNamed(d)) }},
}

// interactionIDs adds the optional interaction id, unique per CAT where
// set: the database itself refuses a second row of an id, whatever
// writes it. The id is bounded (analytics.MaxInteractionIDBytes), so the
// index entries stay small.
func interactionIDs() []string {
	return []string{
		`ALTER TABLE interactions ADD COLUMN interaction_id TEXT`,
		`CREATE UNIQUE INDEX interactions_cat_interaction_id ON interactions (cat, interaction_id) WHERE interaction_id IS NOT NULL`,
	}
}

func latestVersion(steps []Migration) int { return steps[len(steps)-1].Version }

// dictionaryTables names the dictionary of each rollup dimension, in the
// order of rollupDims.
var dictionaryTables = []string{"topic_dict", "model_dict", "persona_dict", "question_dict", "answer_dict"}

// analyticsSchema creates the raw log, the dictionaries and the rollups.
//
// The raw index covers only api rows, the only kind ever counted: it serves
// the same queries as (cat, event_kind, time) and cannot be broken by a
// long event kind (PostgreSQL caps a B-tree entry near 2.7 kB, and
// interaction fields may be 64 kB). For the same reason the dictionaries are
// unique on a SHA-256 digest of (cat, id, text) rather than on the texts.
func analyticsSchema(d dialect) []string {
	serial, timeType, blob, bigint := "INTEGER PRIMARY KEY", "INTEGER", "BLOB", "INTEGER"
	if d == postgresDialect {
		serial, timeType, blob, bigint = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "TIMESTAMPTZ", "BYTEA", "BIGINT"
	}
	out := []string{
		`CREATE TABLE interactions (
			id ` + serial + `,
			occurred_at ` + timeType + ` NOT NULL,
			cat TEXT NOT NULL,
			event_kind TEXT NOT NULL,
			question TEXT NOT NULL,
			answer TEXT NOT NULL,
			topic TEXT NOT NULL,
			model TEXT NOT NULL,
			persona TEXT NOT NULL,
			question_id TEXT NOT NULL,
			answer_id TEXT NOT NULL,
			user_id TEXT NOT NULL,
			conversation_id TEXT NOT NULL
		)`,
		`CREATE INDEX interactions_api_cat_time ON interactions (cat, occurred_at) WHERE event_kind = 'api'`,
	}
	for _, table := range dictionaryTables {
		out = append(out,
			`CREATE TABLE `+table+` (
				code `+serial+`,
				cat TEXT NOT NULL,
				digest `+blob+` NOT NULL UNIQUE,
				item_id TEXT NOT NULL,
				item_text TEXT NOT NULL
			)`,
			`CREATE INDEX `+table+`_cat ON `+table+` (cat)`,
		)
	}
	withoutRowID := ""
	if d == sqliteDialect {
		// One B-tree keyed by the primary key instead of a table plus a
		// unique index: half the writes per upsert.
		withoutRowID = " WITHOUT ROWID"
	}
	out = append(out, `CREATE TABLE rollup_daily (
			cat TEXT NOT NULL,
			day `+bigint+` NOT NULL,
			topic_code `+bigint+` NOT NULL,
			model_code `+bigint+` NOT NULL,
			persona_code `+bigint+` NOT NULL,
			question_code `+bigint+` NOT NULL,
			answer_code `+bigint+` NOT NULL,
			hits `+bigint+` NOT NULL,
			PRIMARY KEY (cat, day, topic_code, model_code, persona_code, question_code, answer_code)
		)`+withoutRowID)
	return out
}

// Migrate applies the missing steps of one component's schema in one
// transaction. Sibling adapters that keep their own tables in this database
// (authentication, chat) call it with their own component name. On
// PostgreSQL an advisory lock, scoped to the current schema, makes
// concurrent starters wait for each other; on SQLite the immediate
// transaction does the same.
func (s *Store) Migrate(ctx context.Context, component string, steps []Migration) error {
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
		current, err := schemaVersion(ctx, tx, component)
		if err != nil {
			return err
		}
		for _, m := range steps {
			if m.Version <= current {
				continue
			}
			for _, stmt := range m.Statements(s.dialect.String()) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migration %s %d: %w", component, m.Version, err)
				}
			}
			if m.Backfill != nil {
				if err := m.Backfill(ctx, tx, s.dialect.String()); err != nil {
					return fmt.Errorf("migration %s %d: %w", component, m.Version, err)
				}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (component, version, name) VALUES (?, ?, ?)", component, m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "database migration failed")
	}
	return nil
}

// schemaVersion returns the highest applied migration of a component, 0
// for none.
func schemaVersion(ctx context.Context, db bun.IDB, component string) (int, error) {
	var version sql.NullInt64
	if err := db.NewSelect().TableExpr("schema_migrations").ColumnExpr("MAX(version)").
		Where("component = ?", component).Scan(ctx, &version); err != nil {
		return 0, err
	}
	return int(version.Int64), nil
}

// Advisory lock classes of this package, the first key of PostgreSQL's
// two-key advisory locks; the second is a hash of the current schema.
const (
	lockMigrate = 0x63617401 // "cat\x01"
)
