package chatsql

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// overrideSchema is migration step 2: a version per stored document, and
// the one counter the versions come from. The counter's single row is
// updated first by every save, so its row lock queues the saves and the
// versions are handed out in the order the saves commit: a reader that
// saw version v has seen every save numbered below it.
func overrideSchema(string) []string {
	return []string{
		`ALTER TABLE chat_cat_overrides ADD COLUMN version BIGINT NOT NULL DEFAULT 0`,
		`UPDATE chat_cat_overrides SET version = 1`,
		`CREATE INDEX chat_cat_overrides_version ON chat_cat_overrides (version)`,
		`CREATE TABLE chat_override_clock (
			id INTEGER PRIMARY KEY,
			version BIGINT NOT NULL
		)`,
		`INSERT INTO chat_override_clock (id, version) VALUES (1, 1)`,
	}
}

// CatOverridesSince returns the documents saved above since, by version.
func (s *Store) CatOverridesSince(ctx context.Context, since int64) ([]ports.CatOverride, error) {
	// since 0 is every document, also one an older release saved without
	// a version (0) during a rolling deploy.
	where := "version > ?"
	if since <= 0 {
		where = "? <= 0"
	}
	rows, err := s.db.QueryContext(ctx, `SELECT cat, doc, version FROM chat_cat_overrides WHERE `+where+` ORDER BY version, cat`, since)
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []ports.CatOverride
	for rows.Next() {
		var o ports.CatOverride
		if err := rows.Scan(&o.Cat, &o.Doc, &o.Version); err != nil {
			return nil, internal(err)
		}
		o.Doc = slices.Clone(o.Doc)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}

// SaveCatOverride replaces the CAT's document when its stored version is
// still expected, in one transaction that first takes the next version
// from the counter (and with it the counter's row lock).
func (s *Store) SaveCatOverride(ctx context.Context, cat string, expected int64, doc []byte) (int64, error) {
	if doc == nil {
		doc = []byte{}
	}
	var version int64
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.QueryRowContext(ctx, `UPDATE chat_override_clock SET version = version + 1 WHERE id = 1 RETURNING version`).Scan(&version); err != nil {
			return err
		}
		var current int64
		err := tx.QueryRowContext(ctx, `SELECT version FROM chat_cat_overrides WHERE cat = ?`, cat).Scan(&current)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if current != expected {
			return errs.New(errs.KindConflict, "the runtime configuration of CAT %q changed meanwhile", cat)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_cat_overrides (cat, doc, version) VALUES (?, ?, ?)
			ON CONFLICT (cat) DO UPDATE SET doc = excluded.doc, version = excluded.version`, cat, doc, version); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return 0, internal(err)
	}
	return version, nil
}
