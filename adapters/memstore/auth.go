package memstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.UserStore          = (*Auth)(nil)
	_ ports.RefreshTokenStore  = (*Auth)(nil)
	_ ports.Revocations        = (*Auth)(nil)
	_ ports.AuditLog           = (*Auth)(nil)
	_ ports.MemoryStore        = (*Auth)(nil)
	_ ports.UserEraser         = (*Auth)(nil)
	_ ports.RefreshTokenEraser = (*Auth)(nil)
)

// Auth keeps accounts, refresh tokens, revocations, the audit log and the
// users' memories in memory: the reference of the auth ports' contract
// suites, and the store of a server run without a database. Safe for
// concurrent use.
type Auth struct {
	mu          sync.Mutex
	users       map[string]auth.User
	byIdentity  map[[2]string]string
	refresh     map[string]auth.RefreshToken
	revocations map[string]time.Time
	audit       []auth.AuditEvent
	memories    map[string]auth.Memory
}

// NewAuth returns an empty store.
func NewAuth() *Auth {
	return &Auth{
		users: map[string]auth.User{}, byIdentity: map[[2]string]string{},
		refresh: map[string]auth.RefreshToken{}, revocations: map[string]time.Time{},
		memories: map[string]auth.Memory{},
	}
}

// UpsertUser creates or refreshes the account of an identity.
func (a *Auth) UpsertUser(_ context.Context, id auth.Identity, at time.Time) (auth.User, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := [2]string{id.Provider, id.Subject}
	if uid, ok := a.byIdentity[key]; ok {
		u := a.users[uid]
		u.Email, u.Name, u.UpdatedAt = id.Email, id.Name, at.UTC()
		a.users[uid] = u
		return u, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return auth.User{}, errs.Wrap(errs.KindInternal, err, "no randomness")
	}
	u := auth.User{ID: "u_" + hex.EncodeToString(b), Identity: id, Role: auth.RoleUser, CreatedAt: at.UTC(), UpdatedAt: at.UTC()}
	a.users[u.ID] = u
	a.byIdentity[key] = u.ID
	return u, nil
}

// User returns an account by id.
func (a *Auth) User(_ context.Context, id string) (auth.User, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.users[id]
	if !ok {
		return auth.User{}, errs.New(errs.KindNotFound, "user not found")
	}
	return u, nil
}

// SaveRefresh stores a new refresh token.
func (a *Auth) SaveRefresh(_ context.Context, t auth.RefreshToken) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.refresh[t.Hash]; dup {
		return errs.New(errs.KindConflict, "refresh token already stored")
	}
	a.refresh[t.Hash] = t
	return nil
}

// ConsumeRefresh marks a live token used and returns it.
func (a *Auth) ConsumeRefresh(_ context.Context, hash string, at time.Time) (auth.RefreshToken, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.refresh[hash]
	if !ok {
		return auth.RefreshToken{}, false, errs.New(errs.KindNotFound, "refresh token not found")
	}
	if !t.UsedAt.IsZero() || !t.RevokedAt.IsZero() {
		return t, false, nil
	}
	t.UsedAt = at.UTC()
	a.refresh[hash] = t
	return t, true, nil
}

// RefreshToken returns a token by hash.
func (a *Auth) RefreshToken(_ context.Context, hash string) (auth.RefreshToken, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.refresh[hash]
	if !ok {
		return auth.RefreshToken{}, errs.New(errs.KindNotFound, "refresh token not found")
	}
	return t, nil
}

// RevokeFamily revokes every token of a family.
func (a *Auth) RevokeFamily(_ context.Context, family string, at time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, t := range a.refresh {
		if t.Family == family && t.RevokedAt.IsZero() {
			t.RevokedAt = at.UTC()
			a.refresh[h] = t
		}
	}
	return nil
}

// Revoke denies id until `until`, forgetting entries expired at now.
func (a *Auth) Revoke(_ context.Context, id string, until, now time.Time) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	maps.DeleteFunc(a.revocations, func(_ string, u time.Time) bool { return !u.After(now) })
	if _, ok := a.revocations[id]; ok {
		return false, nil
	}
	a.revocations[id] = until
	return true, nil
}

// Revoked reports whether id is denied at `at`.
func (a *Auth) Revoked(_ context.Context, id string, at time.Time) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.revocations[id]
	return ok && u.After(at), nil
}

// Record appends an audit event.
func (a *Auth) Record(_ context.Context, e auth.AuditEvent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e.Time = e.Time.UTC()
	a.audit = append(a.audit, e)
	return nil
}

// Events returns the selected audit events, oldest first.
func (a *Auth) Events(_ context.Context, f auth.AuditFilter) ([]auth.AuditEvent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []auth.AuditEvent{}
	for _, e := range a.audit {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(x, y auth.AuditEvent) int { return x.Time.Compare(y.Time) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Prune deletes the audit events older than before. The store is in
// memory: one pass under the lock, batch does not matter.
func (a *Auth) Prune(_ context.Context, before time.Time, _ int) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.audit)
	a.audit = slices.DeleteFunc(a.audit, func(e auth.AuditEvent) bool { return e.Time.Before(before) })
	return n - len(a.audit), nil
}

// Memory returns a user's memory.
func (a *Auth) Memory(_ context.Context, userID string) (auth.Memory, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return cloneMemory(a.memories[userID]), nil
}

// UpdateMemory replaces a user's memory by change(current).
func (a *Auth) UpdateMemory(_ context.Context, userID string, change func(auth.Memory) (auth.Memory, error)) (auth.Memory, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	next, err := change(cloneMemory(a.memories[userID]))
	if err != nil {
		return auth.Memory{}, err
	}
	next = cloneMemory(next)
	next.UpdatedAt = next.UpdatedAt.UTC()
	a.memories[userID] = next
	return cloneMemory(next), nil
}

// DeleteMemory removes a user's memory.
func (a *Auth) DeleteMemory(_ context.Context, userID string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.memories, userID)
	return nil
}

// cloneMemory copies the map, so callers never share it with the store.
func cloneMemory(m auth.Memory) auth.Memory {
	p := make(map[string]json.RawMessage, len(m.Preferences))
	for k, v := range m.Preferences {
		p[k] = slices.Clone(v)
	}
	return auth.Memory{Preferences: p, UpdatedAt: m.UpdatedAt}
}

// UserByIdentity returns the account of (provider, subject).
func (a *Auth) UserByIdentity(_ context.Context, provider, subject string) (auth.User, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	uid, ok := a.byIdentity[[2]string{provider, subject}]
	if !ok {
		return auth.User{}, errs.New(errs.KindNotFound, "user not found")
	}
	return a.users[uid], nil
}

// DeleteUser deletes an account.
func (a *Auth) DeleteUser(_ context.Context, id string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.users[id]
	if !ok {
		return false, nil
	}
	delete(a.users, id)
	delete(a.byIdentity, [2]string{u.Provider, u.Subject})
	return true, nil
}

// DeleteRefreshTokens deletes every refresh token of a user and returns
// them, oldest first.
func (a *Auth) DeleteRefreshTokens(_ context.Context, userID string) ([]auth.RefreshToken, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []auth.RefreshToken{}
	for h, t := range a.refresh {
		if t.UserID == userID {
			out = append(out, t)
			delete(a.refresh, h)
		}
	}
	slices.SortFunc(out, func(x, y auth.RefreshToken) int {
		if c := x.IssuedAt.Compare(y.IssuedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Hash, y.Hash)
	})
	return out, nil
}
