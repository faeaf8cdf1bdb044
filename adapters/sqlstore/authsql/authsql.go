// Package authsql keeps the authentication records (accounts, refresh
// token hashes, revocations, the audit log and users' memories) in the
// database of a sqlstore.Store, in tables of its own that it migrates
// under the component name "auth". Times are stored as Unix microseconds
// (0 for none), the same on SQLite and PostgreSQL.
package authsql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.UserStore          = (*Store)(nil)
	_ ports.RefreshTokenStore  = (*Store)(nil)
	_ ports.Revocations        = (*Store)(nil)
	_ ports.AuditLog           = (*Store)(nil)
	_ ports.MemoryStore        = (*Store)(nil)
	_ ports.UserEraser         = (*Store)(nil)
	_ ports.RefreshTokenEraser = (*Store)(nil)
)

// Component names this package's schema steps (sqlstore.Migrate).
const Component = "auth"

// migrations is the auth schema's history. Append new steps; never edit
// one that has shipped.
var migrations = []sqlstore.Migration{
	{Version: 1, Name: "users, refresh tokens, revocations, audit log, memory", Statements: schema},
	{Version: 2, Name: "refresh tokens by user, for erasure", Statements: func(string) []string {
		return []string{`CREATE INDEX auth_refresh_tokens_user ON auth_refresh_tokens (user_id)`}
	}},
}

func schema(dialect string) []string {
	serial := "INTEGER PRIMARY KEY"
	if dialect == sqlstore.DialectPostgres {
		serial = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	return []string{
		`CREATE TABLE auth_users (
			id TEXT PRIMARY KEY,
			provider TEXT NOT NULL,
			subject TEXT NOT NULL,
			email TEXT NOT NULL,
			name TEXT NOT NULL,
			role TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL,
			UNIQUE (provider, subject)
		)`,
		`CREATE TABLE auth_refresh_tokens (
			hash TEXT PRIMARY KEY,
			family TEXT NOT NULL,
			user_id TEXT NOT NULL,
			cat TEXT NOT NULL,
			issued_at BIGINT NOT NULL,
			family_expires_at BIGINT NOT NULL,
			used_at BIGINT NOT NULL DEFAULT 0,
			revoked_at BIGINT NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX auth_refresh_tokens_family ON auth_refresh_tokens (family)`,
		`CREATE TABLE auth_revocations (
			id TEXT PRIMARY KEY,
			until BIGINT NOT NULL
		)`,
		`CREATE INDEX auth_revocations_until ON auth_revocations (until)`,
		`CREATE TABLE auth_audit (
			seq ` + serial + `,
			at BIGINT NOT NULL,
			kind TEXT NOT NULL,
			user_id TEXT NOT NULL,
			provider TEXT NOT NULL,
			cat TEXT NOT NULL,
			ip TEXT NOT NULL,
			user_agent TEXT NOT NULL,
			reason TEXT NOT NULL
		)`,
		`CREATE INDEX auth_audit_at ON auth_audit (at)`,
		`CREATE TABLE auth_memory (
			user_id TEXT PRIMARY KEY,
			preferences TEXT NOT NULL,
			updated_at BIGINT NOT NULL
		)`,
	}
}

// Store is the auth records in SQL. Safe for concurrent use.
type Store struct {
	db       *bun.DB
	postgres bool
}

// Open migrates the auth schema in the store's database and returns the
// auth store on it.
func Open(ctx context.Context, s *sqlstore.Store) (*Store, error) {
	if err := s.Migrate(ctx, Component, migrations); err != nil {
		return nil, err
	}
	return &Store{db: s.DB(), postgres: s.Dialect() == sqlstore.DialectPostgres}, nil
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMicro(n).UTC()
}

func internal(err error) error {
	return sqlstore.Failed(err, "auth store failed")
}

// UpsertUser creates or refreshes the account of an identity.
func (s *Store) UpsertUser(ctx context.Context, id auth.Identity, at time.Time) (auth.User, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return auth.User{}, errs.Wrap(errs.KindInternal, err, "no randomness")
	}
	now := micros(at)
	row := userRow{ID: "u_" + hex.EncodeToString(b), Provider: id.Provider, Subject: id.Subject, Email: id.Email, Name: id.Name,
		Role: auth.RoleUser, CreatedAt: now, UpdatedAt: now}
	if _, err := s.db.NewInsert().Model(&row).On("CONFLICT (provider, subject) DO UPDATE").
		Set("email = EXCLUDED.email, name = EXCLUDED.name, updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
		return auth.User{}, internal(err)
	}
	return s.userWhere(ctx, "provider = ? AND subject = ?", id.Provider, id.Subject)
}

// User returns an account by id.
func (s *Store) User(ctx context.Context, id string) (auth.User, error) {
	return s.userWhere(ctx, "id = ?", id)
}

func (s *Store) userWhere(ctx context.Context, where string, args ...any) (auth.User, error) {
	var row userRow
	err := s.db.NewSelect().Model(&row).Where(where, args...).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.User{}, errs.New(errs.KindNotFound, "user not found")
	}
	if err != nil {
		return auth.User{}, internal(err)
	}
	return row.user(), nil
}
