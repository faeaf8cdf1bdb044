package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

const secret = "session-test-secret-of-32-bytes-or-more"

type clockAt struct{ now *time.Time }

func (c clockAt) Now() time.Time { return *c.now }

// fixture is a Service over moq mocks backed by maps, so each test can see
// exactly which port calls a rule makes.
type fixture struct {
	svc     *session.Service
	now     time.Time
	toks    *tokens.Service
	refresh map[string]auth.RefreshToken
	denied  map[string]time.Time
	events  []auth.AuditEvent
	users   *mocks.UserStoreMock
	store   *mocks.RefreshTokenStoreMock
	revs    *mocks.RevocationsMock
	audit   *mocks.AuditLogMock
	cats    *mocks.CatDirectoryMock
	clock   clockAt
}

func newFixture(t *testing.T, hours int, lifetime time.Duration) *fixture {
	f := &fixture{now: t0, refresh: map[string]auth.RefreshToken{}, denied: map[string]time.Time{}}
	clk := clockAt{&f.now}
	var err error
	f.toks, err = tokens.New([]byte(secret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	user := auth.User{ID: "u1", Identity: auth.Identity{Provider: auth.ProviderB, Subject: "42"}, Role: auth.RoleUser}
	f.users = &mocks.UserStoreMock{
		UpsertUserFunc: func(_ context.Context, id auth.Identity, _ time.Time) (auth.User, error) {
			u := user
			u.Identity = id
			return u, nil
		},
		UserFunc: func(_ context.Context, id string) (auth.User, error) {
			if id != user.ID {
				return auth.User{}, errs.New(errs.KindNotFound, "no user")
			}
			return user, nil
		},
	}
	f.store = &mocks.RefreshTokenStoreMock{
		SaveRefreshFunc: func(_ context.Context, rt auth.RefreshToken) error { f.refresh[rt.Hash] = rt; return nil },
		ConsumeRefreshFunc: func(_ context.Context, hash string, at time.Time) (auth.RefreshToken, bool, error) {
			rt, ok := f.refresh[hash]
			if !ok {
				return auth.RefreshToken{}, false, errs.New(errs.KindNotFound, "no token")
			}
			if !rt.UsedAt.IsZero() || !rt.RevokedAt.IsZero() {
				return rt, false, nil
			}
			rt.UsedAt = at
			f.refresh[hash] = rt
			return rt, true, nil
		},
		RefreshTokenFunc: func(_ context.Context, hash string) (auth.RefreshToken, error) {
			rt, ok := f.refresh[hash]
			if !ok {
				return auth.RefreshToken{}, errs.New(errs.KindNotFound, "no token")
			}
			return rt, nil
		},
		RevokeFamilyFunc: func(_ context.Context, family string, at time.Time) error {
			for h, rt := range f.refresh {
				if rt.Family == family && rt.RevokedAt.IsZero() {
					rt.RevokedAt = at
					f.refresh[h] = rt
				}
			}
			return nil
		},
	}
	f.revs = &mocks.RevocationsMock{
		RevokeFunc: func(_ context.Context, id string, until, _ time.Time) (bool, error) {
			if _, ok := f.denied[id]; ok {
				return false, nil
			}
			f.denied[id] = until
			return true, nil
		},
		RevokedFunc: func(_ context.Context, id string, at time.Time) (bool, error) {
			u, ok := f.denied[id]
			return ok && u.After(at), nil
		},
	}
	f.audit = &mocks.AuditLogMock{RecordFunc: func(_ context.Context, e auth.AuditEvent) error { f.events = append(f.events, e); return nil }}
	cat := catconfig.Defaults("shop")
	cat.Security.JWT.ExpirationHours = hours
	cats := &mocks.CatDirectoryMock{CatFunc: func(_ context.Context, name string) (catconfig.Cat, error) {
		if name != "shop" {
			return catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found", name)
		}
		return cat, nil
	}}
	f.cats, f.clock = cats, clk
	f.svc = session.New(session.Deps{Tokens: f.toks, Users: f.users, Refresh: f.store, Revocations: f.revs,
		Audit: f.audit, Cats: cats, Clock: clk, RefreshLifetime: lifetime})
	return f
}

func (f *fixture) login(t *testing.T) session.Session {
	t.Helper()
	s, err := f.svc.Login(t.Context(), "shop", auth.Identity{Provider: auth.ProviderB, Subject: "42"}, auth.RequestMeta{IP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) kinds() []auth.AuditKind {
	var out []auth.AuditKind
	for _, e := range f.events {
		out = append(out, e.Kind)
	}
	return out
}

func TestLoginIssuesSession(t *testing.T) {
	cases := []struct {
		name       string
		hours      int
		lifetime   time.Duration
		wantAccess time.Duration
	}{
		{"the CAT's expiration_hours", 3, 24 * time.Hour, 3 * time.Hour},
		{"clamped to the login's lifetime", 48, 24 * time.Hour, 24 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.hours, c.lifetime)
			s := f.login(t)
			claims, err := f.svc.Authenticate(t.Context(), s.AccessToken)
			if err != nil || claims.Subject != "u1" || claims.Role != auth.RoleUser || claims.SessionID == "" || !claims.ExpiresAt.Equal(t0.Add(c.wantAccess)) {
				t.Fatalf("claims %+v, %v; want u1, role user, a session id, exp %v", claims, err, t0.Add(c.wantAccess))
			}
			stored, ok := f.refresh[session.HashToken(s.RefreshToken)]
			if !ok || strings.Contains(stored.Hash, s.RefreshToken) || !stored.FamilyExpiresAt.Equal(t0.Add(c.lifetime)) || stored.Cat != "shop" {
				t.Fatalf("stored refresh %+v (found %v): want only the hash, family expiry %v", stored, ok, t0.Add(c.lifetime))
			}
			if got := f.kinds(); len(got) != 1 || got[0] != auth.AuditLoginSuccess || f.events[0].IP != "10.0.0.1" || f.events[0].UserID != "u1" {
				t.Fatalf("audit %+v", f.events)
			}
		})
	}
}

func TestLoginRefusals(t *testing.T) {
	cases := []struct {
		name string
		cat  string
		id   auth.Identity
		kind errs.Kind
	}{
		{"no subject", "shop", auth.Identity{Provider: auth.ProviderA}, errs.KindUnauthorized},
		{"unknown CAT", "nope", auth.Identity{Provider: auth.ProviderA, Subject: "1"}, errs.KindNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 1, time.Hour*24)
			if _, err := f.svc.Login(t.Context(), c.cat, c.id, auth.RequestMeta{}); errs.KindOf(err) != c.kind {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if len(f.users.UpsertUserCalls()) != 0 || len(f.refresh) != 0 {
				t.Fatal("a refused login stored something")
			}
		})
	}
}

func TestRefresh(t *testing.T) {
	cases := []struct {
		name string
		// prepare returns the token to present after a login.
		prepare    func(t *testing.T, f *fixture, s session.Session) string
		wantReason string // "" for success
		wantAudit  auth.AuditKind
	}{
		{"rotates", func(_ *testing.T, _ *fixture, s session.Session) string { return s.RefreshToken }, "", auth.AuditRefresh},
		{"unknown token", func(*testing.T, *fixture, session.Session) string { return "forged" }, "not recognised", auth.AuditRefreshFailure},
		{"empty token", func(*testing.T, *fixture, session.Session) string { return "" }, "missing", ""},
		{"reuse", func(t *testing.T, f *fixture, s session.Session) string {
			if _, err := f.svc.Refresh(t.Context(), s.RefreshToken, auth.RequestMeta{}); err != nil {
				t.Fatal(err)
			}
			return s.RefreshToken
		}, "reuse detected", auth.AuditRefreshReuse},
		{"after logout", func(t *testing.T, f *fixture, s session.Session) string {
			if err := f.svc.Logout(t.Context(), nil, s.RefreshToken, auth.RequestMeta{}); err != nil {
				t.Fatal(err)
			}
			return s.RefreshToken
		}, "revoked", auth.AuditRefreshFailure},
		{"family expired", func(_ *testing.T, f *fixture, s session.Session) string {
			f.now = f.now.Add(24 * time.Hour)
			return s.RefreshToken
		}, "session expired", auth.AuditRefreshFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 2, 24*time.Hour)
			s := f.login(t)
			tok := c.prepare(t, f, s)
			f.events = nil
			f.now = f.now.Add(time.Minute)
			next, err := f.svc.Refresh(t.Context(), tok, auth.RequestMeta{})
			if c.wantReason != "" {
				if errs.KindOf(err) != errs.KindUnauthorized || !strings.Contains(err.Error(), c.wantReason) {
					t.Fatalf("error %v, want unauthorized %q", err, c.wantReason)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				old := f.refresh[session.HashToken(s.RefreshToken)]
				fresh := f.refresh[session.HashToken(next.RefreshToken)]
				if old.UsedAt.IsZero() || fresh.Family != old.Family || !fresh.FamilyExpiresAt.Equal(old.FamilyExpiresAt) || next.Access.SessionID != s.Access.SessionID {
					t.Fatalf("rotation: old %+v, new %+v", old, fresh)
				}
			}
			if c.wantAudit != "" && (len(f.events) == 0 || f.events[len(f.events)-1].Kind != c.wantAudit) {
				t.Fatalf("audit %v, want %s last", f.kinds(), c.wantAudit)
			}
		})
	}
}

func TestReuseRevokesTheWholeSession(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	s := f.login(t)
	next, err := f.svc.Refresh(t.Context(), s.RefreshToken, auth.RequestMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Refresh(t.Context(), s.RefreshToken, auth.RequestMeta{}); err == nil {
		t.Fatal("reuse accepted")
	}
	if _, err := f.svc.Refresh(t.Context(), next.RefreshToken, auth.RequestMeta{}); err == nil {
		t.Fatal("the newest token of a family revoked for reuse was accepted")
	}
	for name, tok := range map[string]string{"first": s.AccessToken, "second": next.AccessToken} {
		if _, err := f.svc.Authenticate(t.Context(), tok); errs.KindOf(err) != errs.KindUnauthorized {
			t.Errorf("%s access token of the session: %v, want refused", name, err)
		}
	}
}

func TestLogout(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	s := f.login(t)
	other := f.login(t)
	claims := s.Access
	for i := range 2 { // idempotent
		if err := f.svc.Logout(t.Context(), &claims, s.RefreshToken, auth.RequestMeta{}); err != nil {
			t.Fatalf("logout %d: %v", i+1, err)
		}
	}
	if _, err := f.svc.Authenticate(t.Context(), s.AccessToken); err == nil {
		t.Error("access token accepted after logout")
	}
	if _, err := f.svc.Authenticate(t.Context(), other.AccessToken); err != nil {
		t.Errorf("another session's token refused: %v", err)
	}
	if err := f.svc.Logout(t.Context(), nil, "unknown", auth.RequestMeta{}); err != nil {
		t.Errorf("logout with an unknown token: %v", err)
	}
	if until := f.denied["jti:"+claims.ID]; !until.Equal(claims.ExpiresAt.Add(tokens.Leeway)) {
		t.Errorf("jti denied until %v, want the token's expiry plus leeway", until)
	}
}

func TestAuditFailureFailsTheLogin(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	f.audit.RecordFunc = func(context.Context, auth.AuditEvent) error { return errors.New("disk full") }
	_, err := f.svc.Login(t.Context(), "shop", auth.Identity{Provider: auth.ProviderB, Subject: "42"}, auth.RequestMeta{})
	if errs.KindOf(err) != errs.KindInternal {
		t.Fatalf("error %v, want internal", err)
	}
}

func TestClaimState(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	fs := session.FlowState{State: "s1", ExpiresAt: t0.Add(time.Minute)}
	if err := f.svc.ClaimState(t.Context(), fs); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.ClaimState(t.Context(), fs); errs.KindOf(err) != errs.KindUnauthorized {
		t.Fatalf("replayed state: %v, want unauthorized", err)
	}
}

func TestAdminsListedByProviderSubject(t *testing.T) {
	cases := []struct {
		name   string
		admins []string
		want   string
	}{
		{"listed account is admin", []string{auth.ProviderB + ":42"}, auth.RoleAdmin},
		{"same subject at another provider is not", []string{auth.ProviderA + ":42"}, auth.RoleUser},
		{"no list", nil, auth.RoleUser},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 24, 24*time.Hour)
			f.svc = session.New(session.Deps{Tokens: f.toks, Users: f.users, Refresh: f.store, Revocations: f.revs,
				Audit: f.audit, Cats: f.cats, Clock: f.clock, RefreshLifetime: 24 * time.Hour, Admins: c.admins})
			s := f.login(t)
			claims, err := f.svc.Authenticate(t.Context(), s.AccessToken)
			if err != nil || claims.Role != c.want || s.User.Role != c.want {
				t.Fatalf("login role %q / session user %q, %v; want %q", claims.Role, s.User.Role, err, c.want)
			}
			// A refresh keeps the role: it is decided at every issue.
			r, err := f.svc.Refresh(t.Context(), s.RefreshToken, auth.RequestMeta{})
			if err != nil {
				t.Fatal(err)
			}
			if claims, err := f.svc.Authenticate(t.Context(), r.AccessToken); err != nil || claims.Role != c.want {
				t.Fatalf("refreshed role %q, %v; want %q", claims.Role, err, c.want)
			}
		})
	}
}

func TestBearerOnlyLogoutEndsTheSession(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	s := f.login(t)
	refreshed, err := f.svc.Refresh(t.Context(), s.RefreshToken, auth.RequestMeta{})
	if err != nil {
		t.Fatal(err)
	}
	other := f.login(t)
	claims := refreshed.Access
	if err := f.svc.Logout(t.Context(), &claims, "", auth.RequestMeta{}); err != nil {
		t.Fatal(err)
	}
	for name, token := range map[string]string{"the presented token": refreshed.AccessToken, "an earlier token of the login": s.AccessToken} {
		if _, err := f.svc.Authenticate(t.Context(), token); err == nil {
			t.Errorf("%s accepted after a bearer-only logout", name)
		}
	}
	if _, err := f.svc.Refresh(t.Context(), refreshed.RefreshToken, auth.RequestMeta{}); errs.KindOf(err) != errs.KindUnauthorized {
		t.Errorf("refresh after a bearer-only logout: %v, want unauthorized", err)
	}
	if _, err := f.svc.Authenticate(t.Context(), other.AccessToken); err != nil {
		t.Errorf("another login's token refused: %v", err)
	}
}

// TestUnavailableStoreStaysUnavailable: a store that is down for now
// (errs.KindUnavailable, e.g. a lost database) keeps its kind through the
// session service, so the client is told to try again rather than given
// an internal error; other store failures stay internal.
func TestUnavailableStoreStaysUnavailable(t *testing.T) {
	f := newFixture(t, 2, 24*time.Hour)
	s := f.login(t)
	down := errs.Wrap(errs.KindUnavailable, errs.Temporary(errors.New("connection lost")), "the database is temporarily unavailable")
	f.revs.RevokedFunc = func(context.Context, string, time.Time) (bool, error) { return false, down }
	if _, err := f.svc.Authenticate(t.Context(), s.AccessToken); errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) {
		t.Errorf("Authenticate with the store down: %v (kind %v), want it unavailable", err, errs.KindOf(err))
	}
	f.audit.RecordFunc = func(context.Context, auth.AuditEvent) error { return down }
	if _, err := f.svc.Login(t.Context(), "shop", auth.Identity{Provider: auth.ProviderB, Subject: "42"}, auth.RequestMeta{}); errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("Login with the audit store down: %v (kind %v), want it unavailable", err, errs.KindOf(err))
	}
}
