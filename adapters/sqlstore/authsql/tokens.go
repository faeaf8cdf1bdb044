package authsql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

const refreshColumns = `hash, family, user_id, cat, issued_at, family_expires_at, used_at, revoked_at`

// SaveRefresh stores a new refresh token.
func (s *Store) SaveRefresh(ctx context.Context, t auth.RefreshToken) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO auth_refresh_tokens (`+refreshColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING`,
		t.Hash, t.Family, t.UserID, t.Cat, micros(t.IssuedAt), micros(t.FamilyExpiresAt), micros(t.UsedAt), micros(t.RevokedAt))
	if err != nil {
		return internal(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return internal(err)
	} else if n == 0 {
		return errs.New(errs.KindConflict, "refresh token already stored")
	}
	return nil
}

// ConsumeRefresh marks a live token used and returns it. The conditional
// update is the atomic step: of two concurrent calls only one changes the
// row. It returns the row as it changed it: read afterwards, the token may
// already be revoked by the other call's reuse detection (a concurrent
// reuse on another instance), and the one refresh that consumed it would
// be refused with it.
func (s *Store) ConsumeRefresh(ctx context.Context, hash string, at time.Time) (auth.RefreshToken, bool, error) {
	t, err := scanRefresh(s.db.QueryRowContext(ctx,
		`UPDATE auth_refresh_tokens SET used_at = ? WHERE hash = ? AND used_at = 0 AND revoked_at = 0 RETURNING `+refreshColumns,
		micros(at), hash))
	if err == nil {
		return t, true, nil
	}
	if errs.KindOf(err) != errs.KindNotFound {
		return auth.RefreshToken{}, false, err
	}
	t, err = s.RefreshToken(ctx, hash)
	if err != nil {
		return auth.RefreshToken{}, false, err
	}
	return t, false, nil
}

// refreshToken returns a token by hash.
func (s *Store) refreshToken(ctx context.Context, hash string) (auth.RefreshToken, error) {
	return scanRefresh(s.db.QueryRowContext(ctx, `SELECT `+refreshColumns+` FROM auth_refresh_tokens WHERE hash = ?`, hash))
}

// scanRefresh reads a row of refreshColumns; no row is errs.KindNotFound.
func scanRefresh(row *sql.Row) (auth.RefreshToken, error) {
	var t auth.RefreshToken
	var issued, expires, used, revoked int64
	err := row.Scan(&t.Hash, &t.Family, &t.UserID, &t.Cat, &issued, &expires, &used, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.RefreshToken{}, errs.New(errs.KindNotFound, "refresh token not found")
	}
	if err != nil {
		return auth.RefreshToken{}, internal(err)
	}
	t.IssuedAt, t.FamilyExpiresAt, t.UsedAt, t.RevokedAt = fromMicros(issued), fromMicros(expires), fromMicros(used), fromMicros(revoked)
	return t, nil
}

// revokeFamily revokes every token of a family.
func (s *Store) revokeFamily(ctx context.Context, family string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE auth_refresh_tokens SET revoked_at = ? WHERE family = ? AND revoked_at = 0`, micros(at), family); err != nil {
		return internal(err)
	}
	return nil
}

// Revoke denies id until `until`, forgetting entries expired at now.
func (s *Store) Revoke(ctx context.Context, id string, until, now time.Time) (bool, error) {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM auth_revocations WHERE until <= ?`, micros(now)); err != nil {
		return false, internal(err)
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO auth_revocations (id, until) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, id, micros(until))
	if err != nil {
		return false, internal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, internal(err)
	}
	return n == 1, nil
}

// revoked reports whether id is denied at `at`.
func (s *Store) revoked(ctx context.Context, id string, at time.Time) (bool, error) {
	var n int
	// Asked on every authenticated request: on PostgreSQL with bound
	// values, so the driver prepares the statement once per connection
	// instead of the server parsing a new text each time.
	query := `SELECT COUNT(*) FROM auth_revocations WHERE id = ? AND until > ?`
	if s.postgres {
		query = `SELECT COUNT(*) FROM auth_revocations WHERE id = $1 AND until > $2`
	}
	err := s.db.DB.QueryRowContext(ctx, query, id, micros(at)).Scan(&n)
	if err != nil {
		return false, internal(err)
	}
	return n > 0, nil
}
