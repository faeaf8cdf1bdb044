package authsql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// SaveRefresh stores a new refresh token.
func (s *Store) SaveRefresh(ctx context.Context, t auth.RefreshToken) error {
	row := newRefreshRow(t)
	res, err := s.db.NewInsert().Model(&row).On("CONFLICT (hash) DO NOTHING").Exec(ctx)
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
	var row refreshRow
	err := s.db.NewUpdate().Model(&row).Set("used_at = ?", micros(at)).
		Where("hash = ? AND used_at = 0 AND revoked_at = 0", hash).Returning("*").Scan(ctx)
	if err == nil {
		return row.token(), true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return auth.RefreshToken{}, false, internal(err)
	}
	t, err := s.RefreshToken(ctx, hash)
	if err != nil {
		return auth.RefreshToken{}, false, err
	}
	return t, false, nil
}

// RefreshToken returns a token by hash.
func (s *Store) RefreshToken(ctx context.Context, hash string) (auth.RefreshToken, error) {
	var row refreshRow
	err := s.db.NewSelect().Model(&row).Where("hash = ?", hash).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.RefreshToken{}, errs.New(errs.KindNotFound, "refresh token not found")
	}
	if err != nil {
		return auth.RefreshToken{}, internal(err)
	}
	return row.token(), nil
}

// RevokeFamily revokes every token of a family.
func (s *Store) RevokeFamily(ctx context.Context, family string, at time.Time) error {
	if _, err := s.db.NewUpdate().Model((*refreshRow)(nil)).Set("revoked_at = ?", micros(at)).
		Where("family = ? AND revoked_at = 0", family).Exec(ctx); err != nil {
		return internal(err)
	}
	return nil
}

// Revoke denies id until `until`, forgetting entries expired at now.
func (s *Store) Revoke(ctx context.Context, id string, until, now time.Time) (bool, error) {
	if _, err := s.db.NewDelete().Model((*revocationRow)(nil)).Where("until <= ?", micros(now)).Exec(ctx); err != nil {
		return false, internal(err)
	}
	res, err := s.db.NewInsert().Model(&revocationRow{ID: id, Until: micros(until)}).On("CONFLICT (id) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, internal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, internal(err)
	}
	return n == 1, nil
}

// Revoked reports whether id is denied at `at`.
func (s *Store) Revoked(ctx context.Context, id string, at time.Time) (bool, error) {
	var n int
	// Raw SQL with bound values on PostgreSQL: asked on every request, so
	// the driver prepares it once per connection.
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
