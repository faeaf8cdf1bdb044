package authsql

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/auth"
)

// The port methods safe to run again, each retried as a whole
// (sqlstore.Retry) when its connection is lost: the reads, and the writes
// whose repetition changes nothing (an upsert of the same identity, a
// family revoked again, a memory deleted again). The others (audit
// records, refresh-token saves and uses, revocations, memory updates)
// are not repeated: a lost connection fails them with
// errs.KindUnavailable.

// User returns an account by id (user).
func (s *Store) User(ctx context.Context, id string) (auth.User, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (auth.User, error) { return s.user(ctx, id) })
}

// UpsertUser creates or refreshes the account of an identity
// (upsertUser).
func (s *Store) UpsertUser(ctx context.Context, id auth.Identity, at time.Time) (auth.User, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (auth.User, error) { return s.upsertUser(ctx, id, at) })
}

// Memory returns a user's memory (memory).
func (s *Store) Memory(ctx context.Context, userID string) (auth.Memory, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (auth.Memory, error) { return s.memory(ctx, userID) })
}

// DeleteMemory removes a user's memory (deleteMemory).
func (s *Store) DeleteMemory(ctx context.Context, userID string) error {
	return sqlstore.RetryErr(ctx, func(ctx context.Context) error { return s.deleteMemory(ctx, userID) })
}

// RefreshToken returns a token by hash (refreshToken).
func (s *Store) RefreshToken(ctx context.Context, hash string) (auth.RefreshToken, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (auth.RefreshToken, error) { return s.refreshToken(ctx, hash) })
}

// RevokeFamily revokes every token of a family (revokeFamily).
func (s *Store) RevokeFamily(ctx context.Context, family string, at time.Time) error {
	return sqlstore.RetryErr(ctx, func(ctx context.Context) error { return s.revokeFamily(ctx, family, at) })
}

// Revoked reports whether id is denied at `at` (revoked).
func (s *Store) Revoked(ctx context.Context, id string, at time.Time) (bool, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (bool, error) { return s.revoked(ctx, id, at) })
}

// Events returns the selected audit events, oldest first (events).
func (s *Store) Events(ctx context.Context, f auth.AuditFilter) ([]auth.AuditEvent, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) ([]auth.AuditEvent, error) { return s.events(ctx, f) })
}
