package authsql

import (
	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/auth"
)

// The tables' rows as bun models; times in Unix microseconds (0: none).

type userRow struct {
	bun.BaseModel `bun:"table:auth_users"`
	ID            string `bun:",pk"`
	Provider      string
	Subject       string
	Email         string
	Name          string
	Role          string
	CreatedAt     int64
	UpdatedAt     int64
}

func (r userRow) user() auth.User {
	return auth.User{ID: r.ID, Identity: auth.Identity{Provider: r.Provider, Subject: r.Subject, Email: r.Email, Name: r.Name},
		Role: r.Role, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt)}
}

type refreshRow struct {
	bun.BaseModel   `bun:"table:auth_refresh_tokens"`
	Hash            string `bun:",pk"`
	Family          string
	UserID          string
	Cat             string
	IssuedAt        int64
	FamilyExpiresAt int64
	UsedAt          int64
	RevokedAt       int64
}

func newRefreshRow(t auth.RefreshToken) refreshRow {
	return refreshRow{Hash: t.Hash, Family: t.Family, UserID: t.UserID, Cat: t.Cat, IssuedAt: micros(t.IssuedAt),
		FamilyExpiresAt: micros(t.FamilyExpiresAt), UsedAt: micros(t.UsedAt), RevokedAt: micros(t.RevokedAt)}
}

func (r refreshRow) token() auth.RefreshToken {
	return auth.RefreshToken{Hash: r.Hash, Family: r.Family, UserID: r.UserID, Cat: r.Cat, IssuedAt: fromMicros(r.IssuedAt),
		FamilyExpiresAt: fromMicros(r.FamilyExpiresAt), UsedAt: fromMicros(r.UsedAt), RevokedAt: fromMicros(r.RevokedAt)}
}

type auditRow struct {
	bun.BaseModel `bun:"table:auth_audit"`
	Seq           int64 `bun:",pk,autoincrement"`
	At            int64
	Kind          string
	UserID        string
	Provider      string
	Cat           string
	IP            string `bun:"ip"`
	UserAgent     string
	Reason        string
}

type revocationRow struct {
	bun.BaseModel `bun:"table:auth_revocations"`
	ID            string `bun:",pk"`
	Until         int64
}
