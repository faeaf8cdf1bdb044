package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/errs"
)

// migration is one step of the schema. Steps are applied in order, each
// once; a database records the versions it has in schema_migrations.
type migration struct {
	version    int
	name       string
	statements func(d dialect) []string
}

// migrations is the schema's history. Append new steps; never edit one that
// has shipped.
var migrations = []migration{
	{version: 1, name: "interactions and daily rollups", statements: analyticsSchema},
}

func latestVersion() int { return migrations[len(migrations)-1].version }

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

// migrate applies the missing steps in one transaction. On PostgreSQL an
// advisory lock, scoped to the current schema, makes concurrent starters
// wait for each other; on SQLite the immediate transaction does the same.
func (s *Store) migrate(ctx context.Context) error {
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if s.dialect == postgresDialect {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))", lockMigrate); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY,
			name TEXT NOT NULL
		)`); err != nil {
			return err
		}
		current, err := s.schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range migrations {
			if m.version <= current {
				continue
			}
			for _, stmt := range m.statements(s.dialect) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migration %d: %w", m.version, err)
				}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", m.version, m.name); err != nil {
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

// schemaVersion returns the highest applied migration, 0 for none.
func (s *Store) schemaVersion(ctx context.Context, db bun.IDB) (int, error) {
	var version sql.NullInt64
	if err := db.NewSelect().TableExpr("schema_migrations").ColumnExpr("MAX(version)").Scan(ctx, &version); err != nil {
		return 0, err
	}
	return int(version.Int64), nil
}

// Advisory lock classes of this package, the first key of PostgreSQL's
// two-key advisory locks; the second is a hash of the current schema.
const (
	lockMigrate = 0x63617401 // "cat\x01"
	lockAppend  = 0x63617402 // "cat\x02"
)
