package sqlstore

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/catsrv/catsrv/core/errs"
)

// Migration is one step of a component's schema, applied once (Migrate).
// Statements gets the dialect name (DialectSQLite or DialectPostgres).
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
			return backfillBlocks(ctx, tx.Tx, dialectNamed(d), false)
		}},
	{Version: 4, Name: "rollups per topic, model and persona", Statements: func(d string) []string { return cubeRollups(dialectNamed(d)) }},
	{Version: 5, Name: "interaction ids, unique per CAT", Statements: func(string) []string { return interactionIDs() }},
	{Version: 6, Name: "feed order by writing transaction", Statements: func(d string) []string { return feedOrder(dialectNamed(d)) }},
	{Version: 7, Name: "rollups counted from the code blocks", Statements: func(string) []string { return []string{`DROP TABLE rollup_cube`} }},
	{Version: 8, Name: "usage and feedback of each interaction", Statements: func(d string) []string { return usageColumns(dialectNamed(d)) }},
	{Version: 9, Name: "usage in the code blocks; the rating feed", Statements: func(d string) []string { return ratingFeed(dialectNamed(d)) },
		Backfill: func(ctx context.Context, tx bun.Tx, d string) error {
			return rebuildBlocks(ctx, tx.Tx, dialectNamed(d))
		}},
	{Version: 10, Name: "rated rows read from their index alone", Statements: func(d string) []string { return coveringRated(dialectNamed(d)) }},
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

// dictionaryTables names the dictionary of each dimension, in the order of
// analytics.Dimensions.
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

// Migrate brings one component's schema (sibling adapters pass their own)
// up to date through bun's migrator. Step n is the bun migration
// "<component>_<nnnn>", applied in one transaction that records it, and
// skipped when found recorded: by a concurrent starter, or in the
// schema_migrations table of releases before bun's migrator. PostgreSQL
// starters wait for each other on an advisory lock.
func (s *Store) Migrate(ctx context.Context, component string, steps []Migration) error {
	if err := s.migrate(ctx, component, steps); err != nil {
		return errs.Wrap(errs.KindInternal, err, "database migration failed")
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, component string, steps []Migration) error {
	if len(steps) == 0 {
		return nil
	}
	if s.dialect == postgresDialect {
		conn, err := s.db.DB.Conn(ctx)
		if err != nil {
			return err
		}
		defer dropConn(conn) // ends the session, and its lock
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1, hashtext(current_schema()))", lockMigrate); err != nil {
			return err
		}
	}
	legacy, err := s.legacyVersions(ctx, component)
	if err != nil {
		return err
	}
	ms := migrate.NewMigrations()
	for _, step := range steps {
		ms.Add(migrate.Migration{Name: migrationName(component, step.Version), Comment: step.Name,
			Up: func(ctx context.Context, _ *migrate.Migrator, m *migrate.Migration) error {
				return s.applyStep(ctx, step, m, legacy[step.Version])
			}})
	}
	m := migrate.NewMigrator(s.db, ms, migrate.WithMarkAppliedOnSuccess(true), migrate.WithUpsert(true))
	if err := m.Init(ctx); err != nil {
		return err
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("%s: %w", component, err)
	}
	return nil
}

// migrationName is the bun migration of a component's step.
func migrationName(component string, version int) string {
	return fmt.Sprintf("%s_%04d", component, version)
}

// applyStep runs a step's statements and backfill and records it, in one
// transaction, unless it finds the step recorded (or legacy is set: the
// old table has it), when it only records it.
func (s *Store) applyStep(ctx context.Context, step Migration, m *migrate.Migration, legacy bool) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		done, err := tx.NewSelect().TableExpr("bun_migrations").Where("name = ?", m.Name).Exists(ctx)
		if err != nil || done {
			return err
		}
		if !legacy {
			for _, stmt := range step.Statements(s.dialect.String()) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			if step.Backfill != nil {
				if err := step.Backfill(ctx, tx, s.dialect.String()); err != nil {
					return err
				}
			}
		}
		record := *m // the migrator records m again, by name, once this commits
		_, err = tx.NewInsert().Model(&record).ModelTableExpr("bun_migrations").Exec(ctx)
		return err
	})
}

// legacyVersions returns the steps of the component that the table of the
// releases before bun's migrator, schema_migrations, records.
func (s *Store) legacyVersions(ctx context.Context, component string) (map[int]bool, error) {
	var exists bool
	var err error
	if s.dialect == postgresDialect {
		err = s.db.QueryRowContext(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists)
	} else {
		exists, err = s.db.NewSelect().TableExpr("sqlite_master").Where("type = 'table' AND name = 'schema_migrations'").Exists(ctx)
	}
	if err != nil || !exists {
		return nil, err
	}
	var versions []int
	if err := s.db.NewSelect().TableExpr("schema_migrations").Column("version").
		Where("component = ?", component).Scan(ctx, &versions); err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, v := range versions {
		out[v] = true
	}
	return out, nil
}

// migrated reports whether the component's step is recorded.
func migrated(ctx context.Context, db bun.IDB, component string, version int) (bool, error) {
	return db.NewSelect().TableExpr("bun_migrations").Where("name = ?", migrationName(component, version)).Exists(ctx)
}

// lockMigrate is the first key of the migrations' PostgreSQL advisory
// lock; the second is a hash of the current schema.
const lockMigrate = 0x63617401 // "cat\x01"
