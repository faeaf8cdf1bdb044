// Package auth holds the authentication rules of catsrv that do not depend
// on any store: who a verified caller is and what a role may do.
package auth

import (
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// RoleAdmin is the role that may read analytics of non-public CATs.
const RoleAdmin = "admin"

// Claims is what a verified access token says about its bearer.
type Claims struct {
	Subject   string
	Role      string
	ID        string
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
