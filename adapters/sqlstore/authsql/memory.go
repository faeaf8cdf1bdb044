package authsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// Memory returns a user's memory. Raw SQL with the id bound on PostgreSQL:
// read on every chat turn, so the driver prepares it once per connection.
func (s *Store) Memory(ctx context.Context, userID string) (auth.Memory, error) {
	if !s.postgres {
		return readMemory(ctx, s.db, userID, "")
	}
	var text string
	var updated int64
	err := s.db.DB.QueryRowContext(ctx, `SELECT preferences, updated_at FROM auth_memory WHERE user_id = $1`, userID).Scan(&text, &updated)
	return decodeMemory(text, updated, err)
}

// UpdateMemory replaces a user's memory by change(current) in one
// transaction. On PostgreSQL the row is created first if missing and then
// locked, so concurrent updates of one user queue; SQLite's immediate
// transactions queue every writer.
func (s *Store) UpdateMemory(ctx context.Context, userID string, change func(auth.Memory) (auth.Memory, error)) (auth.Memory, error) {
	var out auth.Memory
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		lock := ""
		if s.postgres {
			if _, err := tx.ExecContext(ctx, `INSERT INTO auth_memory (user_id, preferences, updated_at) VALUES (?, '{}', 0) ON CONFLICT (user_id) DO NOTHING`, userID); err != nil {
				return internal(err)
			}
			lock = " FOR UPDATE"
		}
		cur, err := readMemory(ctx, tx, userID, lock)
		if err != nil {
			return err
		}
		next, err := change(cur)
		if err != nil {
			return err
		}
		if next.Preferences == nil {
			next.Preferences = map[string]json.RawMessage{}
		}
		text, err := json.Marshal(next.Preferences)
		if err != nil {
			return errs.Wrap(errs.KindInternal, err, "cannot encode memory")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO auth_memory (user_id, preferences, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET preferences = excluded.preferences, updated_at = excluded.updated_at`,
			userID, string(text), micros(next.UpdatedAt)); err != nil {
			return internal(err)
		}
		next.UpdatedAt = fromMicros(micros(next.UpdatedAt))
		out = next
		return nil
	})
	if err != nil {
		if !isCoreError(err) {
			err = internal(err) // the commit failed
		}
		return auth.Memory{}, err
	}
	return out, nil
}

// DeleteMemory removes a user's memory.
func (s *Store) DeleteMemory(ctx context.Context, userID string) error {
	if _, err := s.db.NewDelete().TableExpr("auth_memory").Where("user_id = ?", userID).Exec(ctx); err != nil {
		return internal(err)
	}
	return nil
}

func readMemory(ctx context.Context, db bun.IDB, userID, lock string) (auth.Memory, error) {
	var text string
	var updated int64
	err := db.QueryRowContext(ctx, `SELECT preferences, updated_at FROM auth_memory WHERE user_id = ?`+lock, userID).Scan(&text, &updated)
	return decodeMemory(text, updated, err)
}

// decodeMemory is the memory of a row read (err from its Scan): empty when
// there is none.
func decodeMemory(text string, updated int64, err error) (auth.Memory, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Memory{Preferences: map[string]json.RawMessage{}}, nil
	}
	if err != nil {
		return auth.Memory{}, internal(err)
	}
	m := auth.Memory{Preferences: map[string]json.RawMessage{}, UpdatedAt: fromMicros(updated)}
	if err := json.Unmarshal([]byte(text), &m.Preferences); err != nil {
		return auth.Memory{}, internal(err)
	}
	return m, nil
}

func isCoreError(err error) bool {
	var e *errs.Error
	return errors.As(err, &e)
}
