package authsql

import (
	"context"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/auth"
)

// The erasure of a person's auth records (ports.UserEraser,
// ports.RefreshTokenEraser).

// UserByIdentity returns the account of (provider, subject).
func (s *Store) UserByIdentity(ctx context.Context, provider, subject string) (auth.User, error) {
	return s.userWhere(ctx, "provider = ? AND subject = ?", provider, subject)
}

// DeleteUser deletes an account.
func (s *Store) DeleteUser(ctx context.Context, id string) (bool, error) {
	res, err := s.db.NewDelete().Model((*userRow)(nil)).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return false, internal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, internal(err)
	}
	return n > 0, nil
}

// DeleteRefreshTokens deletes every refresh token of a user in one
// statement and returns them, oldest first.
func (s *Store) DeleteRefreshTokens(ctx context.Context, userID string) ([]auth.RefreshToken, error) {
	var rows []refreshRow
	if _, err := s.db.NewDelete().Model(&rows).Where("user_id = ?", userID).Returning("*").Exec(ctx); err != nil {
		return nil, internal(err)
	}
	out := make([]auth.RefreshToken, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.token())
	}
	sortTokens(out)
	return out, nil
}

// sortTokens orders tokens by issue time, then hash.
func sortTokens(ts []auth.RefreshToken) {
	slices.SortFunc(ts, func(x, y auth.RefreshToken) int {
		if c := x.IssuedAt.Compare(y.IssuedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Hash, y.Hash)
	})
}
