// Package session is the life of a login after the provider vouched for
// the user: issuing the access token and the refresh token, rotating the
// refresh token with reuse detection, logging out, and checking a
// presented access token against the revocations. It also seals the
// short-lived state of a login in progress (state.go). Every event is
// written to the audit log.
package session

import (
	"context"
	"slices"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// DefaultRefreshLifetime is the absolute lifetime of a refresh family: a
// login lasts this long at most, however often it is refreshed.
const DefaultRefreshLifetime = 30 * 24 * time.Hour

// Revocation id prefixes: access token ids and used login states share one
// deny list.
const (
	revokedAccessPrefix  = "jti:"
	revokedSessionPrefix = "sid:"
	usedStatePrefix      = "state:"
)

// Deps are the ports and settings of a Service.
type Deps struct {
	Tokens      *tokens.Service
	Users       ports.UserStore
	Refresh     ports.RefreshTokenStore
	Revocations ports.Revocations
	Audit       ports.AuditLog
	Cats        ports.CatDirectory
	Clock       ports.Clock
	// RefreshLifetime is the absolute family lifetime; 0 means
	// DefaultRefreshLifetime.
	RefreshLifetime time.Duration
	// Admins lists the provider accounts whose logins get the admin role,
	// as "<provider>:<subject>" (the provider's stable user id, never an
	// email address, which some providers let users choose).
	Admins []string
}

// Service runs logins, refreshes and logouts.
type Service struct{ d Deps }

// New returns a Service.
func New(d Deps) *Service {
	if d.RefreshLifetime <= 0 {
		d.RefreshLifetime = DefaultRefreshLifetime
	}
	return &Service{d: d}
}

// Session is a freshly issued pair of tokens.
type Session struct {
	User          auth.User
	AccessToken   string
	Access        auth.Claims
	RefreshToken  string
	RefreshExpiry time.Time
}

// Audit records an event, stamping its time. Its text is stored as
// auth.AuditEvent.Storable makes it: whatever a client sent, the line is
// written.
func (s *Service) Audit(ctx context.Context, e auth.AuditEvent) error {
	e = e.Storable()
	e.Time = s.d.Clock.Now().UTC()
	if err := s.d.Audit.Record(ctx, e); err != nil {
		return storeFailed(err, "cannot write the audit log")
	}
	return nil
}

// ClaimState marks a login state used, so that a replayed callback is
// refused (errs.KindUnauthorized). The mark lasts as long as the state
// could be valid.
func (s *Service) ClaimState(ctx context.Context, fs FlowState) error {
	first, err := s.d.Revocations.Revoke(ctx, usedStatePrefix+fs.State, fs.ExpiresAt, s.d.Clock.Now())
	if err != nil {
		return storeFailed(err, "cannot record the login state")
	}
	if !first {
		return errs.New(errs.KindUnauthorized, "this login was already completed: start a new one")
	}
	return nil
}

// Login opens a session for an identity a provider vouched for, with the
// token lifetime of the CAT cat.
func (s *Service) Login(ctx context.Context, cat string, id auth.Identity, meta auth.RequestMeta) (Session, error) {
	if id.Provider == "" || id.Subject == "" {
		return Session{}, errs.New(errs.KindUnauthorized, "the provider returned no user id")
	}
	ttl, err := s.accessLifetime(ctx, cat)
	if err != nil {
		return Session{}, err
	}
	now := s.d.Clock.Now().UTC()
	user, err := s.d.Users.UpsertUser(ctx, id, now)
	if err != nil {
		return Session{}, err
	}
	family, err := RandomToken()
	if err != nil {
		return Session{}, err
	}
	ttl = min(ttl, s.d.RefreshLifetime) // no access token outlives its login
	sess, err := s.issue(ctx, user, ttl, auth.RefreshToken{
		Family: family, UserID: user.ID, Cat: cat,
		FamilyExpiresAt: now.Add(s.d.RefreshLifetime).Truncate(time.Second),
	})
	if err != nil {
		return Session{}, err
	}
	return sess, s.Audit(ctx, event(auth.AuditLoginSuccess, user.ID, id.Provider, cat, meta, ""))
}

// Refresh rotates a refresh token: the presented one dies and a new pair is
// issued in the same family, which keeps its absolute expiry. A token that
// was already rotated is a sign of theft: the whole family is revoked and
// the reuse audited. Every refusal is errs.KindUnauthorized.
func (s *Service) Refresh(ctx context.Context, token string, meta auth.RequestMeta) (Session, error) {
	if token == "" {
		return Session{}, errs.New(errs.KindUnauthorized, "refresh token missing")
	}
	now := s.d.Clock.Now().UTC()
	hash := HashToken(token)
	// A logout that presented only the access token revoked the session by
	// its sid: the family must not mint tokens again. That is read before
	// the token is consumed, so that a revocation after it (a concurrent
	// reuse of this very token, on any instance) cannot refuse the one
	// refresh that consumed it; the tokens it gets die with the session
	// (their sid is denied).
	ended, err := s.sessionEnded(ctx, hash, now)
	if err != nil {
		return Session{}, err
	}
	old, fresh, err := s.d.Refresh.ConsumeRefresh(ctx, hash, now)
	if errs.KindOf(err) == errs.KindNotFound {
		return Session{}, s.refuse(ctx, auth.RefreshToken{}, meta, "refresh token not recognised")
	}
	if err != nil {
		return Session{}, err
	}
	switch {
	case !old.RevokedAt.IsZero():
		return Session{}, s.refuse(ctx, old, meta, "refresh token revoked: log in again")
	case !fresh:
		if err := s.revokeSession(ctx, old, now); err != nil {
			return Session{}, err
		}
		if err := s.Audit(ctx, event(auth.AuditRefreshReuse, old.UserID, "", old.Cat, meta, "rotated refresh token presented again; session revoked")); err != nil {
			return Session{}, err
		}
		return Session{}, errs.New(errs.KindUnauthorized, "refresh token reuse detected: the session is revoked, log in again")
	case !now.Before(old.FamilyExpiresAt):
		return Session{}, s.refuse(ctx, old, meta, "session expired: log in again")
	}
	if ended {
		if err := s.d.Refresh.RevokeFamily(ctx, old.Family, now); err != nil {
			return Session{}, err
		}
		return Session{}, s.refuse(ctx, old, meta, "session ended by a logout: log in again")
	}
	user, err := s.d.Users.User(ctx, old.UserID)
	if errs.KindOf(err) == errs.KindNotFound {
		return Session{}, s.refuse(ctx, old, meta, "the session's user no longer exists")
	}
	if err != nil {
		return Session{}, err
	}
	ttl, err := s.accessLifetime(ctx, old.Cat)
	if err != nil {
		return Session{}, err
	}
	if rest := old.FamilyExpiresAt.Sub(now); rest < ttl {
		ttl = rest // no access token outlives its login
	}
	sess, err := s.issue(ctx, user, ttl, auth.RefreshToken{
		Family: old.Family, UserID: user.ID, Cat: old.Cat, FamilyExpiresAt: old.FamilyExpiresAt,
	})
	if err != nil {
		return Session{}, err
	}
	return sess, s.Audit(ctx, event(auth.AuditRefresh, user.ID, "", old.Cat, meta, ""))
}

// sessionEnded reports whether the session of the refresh token with this
// hash was revoked by its sid; an unknown token is not (Refresh refuses it
// when it consumes it).
func (s *Service) sessionEnded(ctx context.Context, hash string, now time.Time) (bool, error) {
	t, err := s.d.Refresh.RefreshToken(ctx, hash)
	if errs.KindOf(err) == errs.KindNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ended, err := s.d.Revocations.Revoked(ctx, revokedSessionPrefix+sessionID(t.Family), now)
	if err != nil {
		return false, storeFailed(err, "cannot check session revocation")
	}
	return ended, nil
}

// Logout ends a session: the refresh family of refreshToken is revoked and
// the access token (when its claims are given) is denied until it
// expires. Either may be missing or already dead: logging out twice is
// not an error.
func (s *Service) Logout(ctx context.Context, access *auth.Claims, refreshToken string, meta auth.RequestMeta) error {
	now := s.d.Clock.Now().UTC()
	userID, cat := "", ""
	if access != nil {
		userID = access.Subject
		if _, err := s.d.Revocations.Revoke(ctx, revokedAccessPrefix+access.ID, access.ExpiresAt.Add(tokens.Leeway), now); err != nil {
			return storeFailed(err, "cannot revoke the access token")
		}
		// The whole session ends too, even when the refresh token is not
		// presented (a Bearer-only client): every access token of the login
		// carries its sid, and no family outlives RefreshLifetime.
		if access.SessionID != "" {
			until := now.Add(s.d.RefreshLifetime + tokens.Leeway)
			if _, err := s.d.Revocations.Revoke(ctx, revokedSessionPrefix+access.SessionID, until, now); err != nil {
				return storeFailed(err, "cannot revoke the session")
			}
		}
	}
	if refreshToken != "" {
		rt, err := s.d.Refresh.RefreshToken(ctx, HashToken(refreshToken))
		switch {
		case err == nil:
			if err := s.revokeSession(ctx, rt, now); err != nil {
				return err
			}
			userID, cat = rt.UserID, rt.Cat
		case errs.KindOf(err) != errs.KindNotFound:
			return err
		}
	}
	return s.Audit(ctx, event(auth.AuditLogout, userID, "", cat, meta, ""))
}

// Authenticate verifies an access token (tokens.Service.Verify) and
// refuses one that was revoked by a logout.
func (s *Service) Authenticate(ctx context.Context, token string) (auth.Claims, error) {
	c, err := s.d.Tokens.Verify(token)
	if err != nil {
		return auth.Claims{}, err
	}
	revoked, err := s.d.Revocations.Revoked(ctx, revokedAccessPrefix+c.ID, s.d.Clock.Now())
	if err != nil {
		return auth.Claims{}, storeFailed(err, "cannot check token revocation")
	}
	if !revoked && c.SessionID != "" {
		revoked, err = s.d.Revocations.Revoked(ctx, revokedSessionPrefix+c.SessionID, s.d.Clock.Now())
		if err != nil {
			return auth.Claims{}, storeFailed(err, "cannot check token revocation")
		}
	}
	if revoked {
		return auth.Claims{}, errs.New(errs.KindUnauthorized, "invalid token: revoked")
	}
	return c, nil
}

// revokeSession ends the login rt belongs to: its refresh family, and
// every access token issued for it (they carry its id as sid), until the
// last of them could expire.
func (s *Service) revokeSession(ctx context.Context, rt auth.RefreshToken, now time.Time) error {
	if err := s.d.Refresh.RevokeFamily(ctx, rt.Family, now); err != nil {
		return err
	}
	if _, err := s.d.Revocations.Revoke(ctx, revokedSessionPrefix+sessionID(rt.Family), rt.FamilyExpiresAt.Add(tokens.Leeway), now); err != nil {
		return storeFailed(err, "cannot revoke the session")
	}
	return nil
}

// sessionID is the public name of a refresh family, the sid of its access
// tokens: a hash, so that the family id itself appears nowhere but in the
// store.
func sessionID(family string) string { return HashToken(family)[:32] }

// issue signs an access token and stores a new refresh token of the family
// rt describes.
func (s *Service) issue(ctx context.Context, user auth.User, ttl time.Duration, rt auth.RefreshToken) (Session, error) {
	if slices.Contains(s.d.Admins, user.Provider+":"+user.Subject) {
		user.Role = auth.RoleAdmin
	}
	access, claims, err := s.d.Tokens.IssueForSession(user.ID, user.Role, sessionID(rt.Family), ttl)
	if err != nil {
		return Session{}, err
	}
	refresh, err := RandomToken()
	if err != nil {
		return Session{}, err
	}
	rt.Hash = HashToken(refresh)
	rt.IssuedAt = claims.IssuedAt
	if err := s.d.Refresh.SaveRefresh(ctx, rt); err != nil {
		return Session{}, err
	}
	return Session{User: user, AccessToken: access, Access: claims, RefreshToken: refresh, RefreshExpiry: rt.FamilyExpiresAt}, nil
}

// refuse audits a refused refresh and returns the refusal.
func (s *Service) refuse(ctx context.Context, rt auth.RefreshToken, meta auth.RequestMeta, reason string) error {
	if err := s.Audit(ctx, event(auth.AuditRefreshFailure, rt.UserID, "", rt.Cat, meta, reason)); err != nil {
		return err
	}
	return errs.New(errs.KindUnauthorized, "%s", reason)
}

// accessLifetime is the CAT's security.jwt.expiration_hours.
func (s *Service) accessLifetime(ctx context.Context, cat string) (time.Duration, error) {
	c, err := s.d.Cats.Cat(ctx, cat)
	if err != nil {
		return 0, err
	}
	return time.Duration(c.Security.JWT.ExpirationHours) * time.Hour, nil
}

func event(kind auth.AuditKind, user, provider, cat string, meta auth.RequestMeta, reason string) auth.AuditEvent {
	return auth.AuditEvent{Kind: kind, UserID: user, Provider: provider, Cat: cat, IP: meta.IP, UserAgent: meta.UserAgent, Reason: reason}
}

// storeFailed is the error of a store call that failed: internal, except
// that a store that is unavailable for now stays so (the client is told
// to try again).
func storeFailed(err error, message string) error {
	if errs.KindOf(err) == errs.KindUnavailable {
		return err
	}
	return errs.Wrap(errs.KindInternal, err, message)
}

// Revocation is the deny-list entry that ends the login rt belongs
// to: every access token issued for it carries the family's sid, and none
// outlives the family. Revoking it (ports.Revocations) has the effect of a
// logout of that session; erasure uses it for every login of the erased
// user.
func Revocation(rt auth.RefreshToken) (id string, until time.Time) {
	return revokedSessionPrefix + sessionID(rt.Family), rt.FamilyExpiresAt.Add(tokens.Leeway)
}
