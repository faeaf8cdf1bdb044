// Package auth holds the authentication rules of catsrv that do not depend
// on any store (who a verified caller is and what a role may do) and the
// records the auth ports exchange: users, refresh tokens, audit events and
// users' memories.
package auth

import (
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// RoleAdmin is the role that may read analytics of non-public CATs.
const RoleAdmin = "admin"

// RoleIngest is the role of a token that may ingest interactions into the
// CATs its claims name (Claims.Cats) and do nothing else.
const RoleIngest = "ingest"

// Roles are the roles catsrv knows: a token of another role may call
// nothing but public routes.
var Roles = []string{RoleAdmin, RoleUser, RoleIngest}

// Claims is what a verified access token says about its bearer.
type Claims struct {
	Subject string
	Role    string
	ID      string
	// SessionID names the login (refresh family) the token was issued
	// for, empty for tokens minted outside a login: a logout revokes every
	// access token of its session at once.
	SessionID string
	// Cats are the CATs an ingest token may ingest into (RoleIngest).
	Cats      []string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// ErrNoCredentials is returned when a request carries no token at all.
var ErrNoCredentials = errs.New(errs.KindUnauthorized, "authentication required: send Authorization: Bearer <token>")

// RequireAdmin allows only admins.
func RequireAdmin(c Claims) error {
	if c.Role != RoleAdmin {
		return errs.New(errs.KindForbidden, "this requires the admin role")
	}
	return nil
}
