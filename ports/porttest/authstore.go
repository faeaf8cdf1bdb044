package porttest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/retention"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// AuthStore is every auth port but memory, as one adapter implements them.
type AuthStore interface {
	ports.UserStore
	ports.UserEraser
	ports.RefreshTokenStore
	ports.RefreshTokenEraser
	ports.Revocations
	ports.AuditLog
}

// TestAuthStore runs the contracts of ports.UserStore,
// ports.RefreshTokenStore, ports.Revocations and ports.AuditLog against the
// adapter open creates (a fresh, empty store per case).
func TestAuthStore(t *testing.T, open func(t *testing.T) AuthStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s AuthStore)
	}{
		{"UpsertUser", testUpsertUser},
		{"UserNotFound", testUserNotFound},
		{"RefreshLifecycle", testRefreshLifecycle},
		{"RefreshConflictAndNotFound", testRefreshConflict},
		{"RevokeFamily", testRevokeFamily},
		{"ConcurrentConsumeOneWinner", testConcurrentConsume},
		{"ConsumeThenReuseRevokes", testConsumeThenReuse},
		{"Revocations", testRevocations},
		{"AuditFilters", testAuditFilters},
		{"AuditPrune", testAuditPrune},
		{"AuditRetentionPruner", testAuditRetention},
		{"DeleteUser", testDeleteUser},
		{"DeleteRefreshTokens", testDeleteRefreshTokens},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testUpsertUser(t *testing.T, s AuthStore) {
	ctx := t.Context()
	a, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_b", Subject: "42", Email: "a@x", Name: "A"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.Role != auth.RoleUser || !a.CreatedAt.Equal(t0) || a.Email != "a@x" {
		t.Fatalf("new user = %+v", a)
	}
	later := t0.Add(time.Hour)
	again, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_b", Subject: "42", Email: "new@x", Name: "New"}, later)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != a.ID || again.Email != "new@x" || again.Name != "New" || !again.CreatedAt.Equal(t0) || !again.UpdatedAt.Equal(later) {
		t.Fatalf("upserted user = %+v, want id %s kept, email and name updated", again, a.ID)
	}
	other, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_c", Subject: "42"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == a.ID {
		t.Fatal("the same subject at another provider must be another user")
	}
	got, err := s.User(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got != again {
		t.Fatalf("User = %+v, want %+v", got, again)
	}
}

func testUserNotFound(t *testing.T, s AuthStore) {
	if _, err := s.User(t.Context(), "nobody"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("User(nobody) error = %v, want not found", err)
	}
}

func token(hash, family string) auth.RefreshToken {
	return auth.RefreshToken{Hash: hash, Family: family, UserID: "u1", Cat: "demo", IssuedAt: t0, FamilyExpiresAt: t0.Add(48 * time.Hour)}
}

func testRefreshLifecycle(t *testing.T, s AuthStore) {
	ctx := t.Context()
	want := token("h1", "f1")
	if err := s.SaveRefresh(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.RefreshToken(ctx, "h1")
	if err != nil || got != want {
		t.Fatalf("RefreshToken = %+v, %v; want %+v", got, err, want)
	}
	used := t0.Add(time.Minute)
	got, fresh, err := s.ConsumeRefresh(ctx, "h1", used)
	want.UsedAt = used
	if err != nil || !fresh || got != want {
		t.Fatalf("first ConsumeRefresh = %+v, %v, %v; want %+v fresh", got, fresh, err, want)
	}
	got, fresh, err = s.ConsumeRefresh(ctx, "h1", used.Add(time.Minute))
	if err != nil || fresh || got != want {
		t.Fatalf("second ConsumeRefresh = %+v, %v, %v; want %+v not fresh, unchanged", got, fresh, err, want)
	}
}

func testRefreshConflict(t *testing.T, s AuthStore) {
	ctx := t.Context()
	if err := s.SaveRefresh(ctx, token("h1", "f1")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRefresh(ctx, token("h1", "f2")); errs.KindOf(err) != errs.KindConflict {
		t.Fatalf("saving a hash twice: error %v, want conflict", err)
	}
	if _, _, err := s.ConsumeRefresh(ctx, "nope", t0); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("ConsumeRefresh(unknown) error = %v, want not found", err)
	}
	if _, err := s.RefreshToken(ctx, "nope"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("RefreshToken(unknown) error = %v, want not found", err)
	}
}

func testRevokeFamily(t *testing.T, s AuthStore) {
	ctx := t.Context()
	for _, tok := range []auth.RefreshToken{token("a1", "A"), token("a2", "A"), token("b1", "B")} {
		if err := s.SaveRefresh(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	first, second := t0.Add(time.Minute), t0.Add(2*time.Minute)
	if err := s.RevokeFamily(ctx, "A", first); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeFamily(ctx, "A", second); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeFamily(ctx, "unknown", second); err != nil {
		t.Fatalf("revoking an unknown family: %v", err)
	}
	for _, h := range []string{"a1", "a2"} {
		got, fresh, err := s.ConsumeRefresh(ctx, h, second)
		if err != nil || fresh || !got.RevokedAt.Equal(first) || !got.UsedAt.IsZero() {
			t.Fatalf("ConsumeRefresh(%s) after revocation = %+v, %v, %v; want revoked at %v, not fresh", h, got, fresh, err, first)
		}
	}
	if _, fresh, err := s.ConsumeRefresh(ctx, "b1", second); err != nil || !fresh {
		t.Fatalf("another family's token: fresh %v, %v; want fresh", fresh, err)
	}
}

func testConcurrentConsume(t *testing.T, s AuthStore) {
	if err := s.SaveRefresh(t.Context(), token("h", "f")); err != nil {
		t.Fatal(err)
	}
	const callers = 8
	var wg sync.WaitGroup
	results := make(chan bool, callers)
	errc := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, fresh, err := s.ConsumeRefresh(context.WithoutCancel(t.Context()), "h", t0)
			results <- fresh
			errc <- err
		})
	}
	wg.Wait()
	close(results)
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	winners := 0
	for fresh := range results {
		if fresh {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d concurrent consumers got fresh, want exactly 1", winners)
	}
}

// testConsumeThenReuse: two callers consume one token at once and the
// one that finds it used revokes its family at once, as a refresh does
// on reuse (on another instance, say). The winner gets the token as it
// consumed it: used, not revoked, whatever the loser did since, so that
// the one refresh that consumed it is not refused.
func testConsumeThenReuse(t *testing.T, s AuthStore) {
	ctx := context.WithoutCancel(t.Context())
	for round := range 100 {
		hash, family := fmt.Sprintf("h%d", round), fmt.Sprintf("f%d", round)
		if err := s.SaveRefresh(ctx, token(hash, family)); err != nil {
			t.Fatal(err)
		}
		type consumed struct {
			t     auth.RefreshToken
			fresh bool
			err   error
		}
		out := make(chan consumed, 2)
		start := make(chan struct{})
		for range 2 {
			go func() {
				<-start
				got, fresh, err := s.ConsumeRefresh(ctx, hash, t0)
				if err == nil && !fresh {
					err = s.RevokeFamily(ctx, family, t0.Add(time.Second))
				}
				out <- consumed{got, fresh, err}
			}()
		}
		close(start)
		winners := 0
		for range 2 {
			c := <-out
			if c.err != nil {
				t.Fatal(c.err)
			}
			if !c.fresh {
				continue
			}
			winners++
			if c.t.UsedAt.IsZero() || !c.t.RevokedAt.IsZero() {
				t.Fatalf("round %d: the winner got %+v, want the token used and not revoked", round, c.t)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, winners)
		}
	}
}

func testRevocations(t *testing.T, s AuthStore) {
	ctx := t.Context()
	until := t0.Add(time.Hour)
	steps := []struct {
		name      string
		id        string
		until     time.Time
		now       time.Time
		wantFirst bool
	}{
		{"first revocation", "jti:1", until, t0, true},
		{"again, later until", "jti:1", until.Add(time.Hour), t0, false},
		{"another id", "jti:2", until, t0, true},
		{"after expiry it is forgotten", "jti:1", until.Add(3 * time.Hour), until.Add(time.Minute), true},
	}
	checks := []struct {
		afterStep int
		id        string
		at        time.Time
		want      bool
	}{
		{0, "jti:1", t0, true},
		{0, "jti:1", until.Add(-time.Second), true},
		{0, "jti:1", until, false},
		{0, "jti:9", t0, false},
		{1, "jti:1", until.Add(time.Minute), false}, // the second revoke did not extend
		{3, "jti:1", until.Add(2 * time.Hour), true},
	}
	for i, st := range steps {
		first, err := s.Revoke(ctx, st.id, st.until, st.now)
		if err != nil || first != st.wantFirst {
			t.Fatalf("%s: Revoke = %v, %v; want first %v", st.name, first, err, st.wantFirst)
		}
		for _, c := range checks {
			if c.afterStep != i {
				continue
			}
			got, err := s.Revoked(ctx, c.id, c.at)
			if err != nil || got != c.want {
				t.Fatalf("after %s: Revoked(%s, %v) = %v, %v; want %v", st.name, c.id, c.at, got, err, c.want)
			}
		}
	}
}

func testAuditFilters(t *testing.T, s AuthStore) {
	ctx := t.Context()
	events := []auth.AuditEvent{
		{Time: t0.Add(2 * time.Hour), Kind: auth.AuditLogout, UserID: "u1", IP: "10.0.0.1", UserAgent: "ua"},
		{Time: t0, Kind: auth.AuditLoginStart, Provider: "provider_a", Cat: "demo", IP: "10.0.0.1"},
		{Time: t0.Add(time.Hour), Kind: auth.AuditLoginSuccess, UserID: "u1", Provider: "provider_a", Cat: "demo"},
		{Time: t0.Add(time.Hour), Kind: auth.AuditRefreshReuse, UserID: "u2", Reason: "reuse"},
		{Time: t0.Add(3 * time.Hour), Kind: auth.AuditRefresh, UserID: "u2"},
	}
	for _, e := range events {
		if err := s.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	filters := []struct {
		name string
		f    auth.AuditFilter
	}{
		{"all", auth.AuditFilter{}},
		{"since", auth.AuditFilter{Since: t0.Add(time.Hour)}},
		{"user", auth.AuditFilter{UserID: "u1"}},
		{"since and user", auth.AuditFilter{Since: t0.Add(90 * time.Minute), UserID: "u2"}},
		{"limit", auth.AuditFilter{Limit: 2}},
		{"nobody", auth.AuditFilter{UserID: "u9"}},
	}
	for _, c := range filters {
		t.Run(c.name, func(t *testing.T) {
			want := []auth.AuditEvent{}
			for _, e := range events {
				if c.f.Matches(e) {
					want = append(want, e)
				}
			}
			// Oldest first; equal times in the order recorded.
			slices.SortStableFunc(want, func(a, b auth.AuditEvent) int { return a.Time.Compare(b.Time) })
			if c.f.Limit > 0 && len(want) > c.f.Limit {
				want = want[:c.f.Limit]
			}
			got, err := s.Events(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b auth.AuditEvent) bool {
				return a.Time.Equal(b.Time) && a.Kind == b.Kind && a.UserID == b.UserID && a == withTime(b, a.Time)
			}) {
				t.Fatalf("Events(%+v) =\n%+v\nwant\n%+v", c.f, got, want)
			}
		})
	}
}

func withTime(e auth.AuditEvent, at time.Time) auth.AuditEvent {
	e.Time = at
	return e
}

// auditAt records one login_start per time, the index in the user agent so
// that the survivors can be told apart.
func auditAt(t *testing.T, s AuthStore, times ...time.Time) []auth.AuditEvent {
	t.Helper()
	out := make([]auth.AuditEvent, 0, len(times))
	for i, at := range times {
		e := auth.AuditEvent{Time: at, Kind: auth.AuditLoginStart, Provider: "provider_a", Cat: "demo", IP: "192.0.2.1", UserAgent: fmt.Sprintf("ua-%d", i)}
		if err := s.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// checkAudit fails unless the log holds exactly want (by time and user
// agent), oldest first.
func checkAudit(t *testing.T, s AuthStore, want []auth.AuditEvent) {
	t.Helper()
	got, err := s.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	slices.SortStableFunc(want, func(a, b auth.AuditEvent) int { return a.Time.Compare(b.Time) })
	if !slices.EqualFunc(got, want, func(a, b auth.AuditEvent) bool { return a.Time.Equal(b.Time) && a.UserAgent == b.UserAgent }) {
		t.Fatalf("audit log holds %d events:\n%v\nwant %d:\n%v", len(got), agents(got), len(want), agents(want))
	}
}

func agents(es []auth.AuditEvent) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.UserAgent+"@"+e.Time.Format(time.RFC3339Nano))
	}
	return out
}

// testAuditPrune: Prune deletes exactly the events older than the cut
// (one at the cut stays), across several batches, and reports how many.
func testAuditPrune(t *testing.T, s AuthStore) {
	ctx := t.Context()
	cut := t0.Add(30 * 24 * time.Hour)
	var times []time.Time
	// 11 old events (more than three batches of 3), interleaved in
	// recording order with newer ones.
	for i := range 11 {
		times = append(times, cut.Add(-time.Duration(i+1)*time.Hour), cut.Add(time.Duration(i)*time.Minute))
	}
	times = append(times, cut.Add(-time.Microsecond), cut.Add(time.Microsecond))
	all := auditAt(t, s, times...)
	var keep []auth.AuditEvent
	for _, e := range all {
		if !e.Time.Before(cut) {
			keep = append(keep, e)
		}
	}
	n, err := s.Prune(ctx, cut, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(all) - len(keep); n != want {
		t.Fatalf("Prune deleted %d, want %d", n, want)
	}
	checkAudit(t, s, keep)
	// Nothing left to prune: a second pass deletes none, whatever the batch.
	if n, err := s.Prune(ctx, cut, 0); err != nil || n != 0 {
		t.Fatalf("second Prune = %d, %v; want 0", n, err)
	}
	checkAudit(t, s, keep)
	// A cut before everything deletes nothing; one after everything, all.
	if n, err := s.Prune(ctx, t0, 2); err != nil || n != 0 {
		t.Fatalf("Prune before all = %d, %v; want 0", n, err)
	}
	if n, err := s.Prune(ctx, cut.Add(time.Hour), 2); err != nil || n != len(keep) {
		t.Fatalf("Prune after all = %d, %v; want %d", n, err, len(keep))
	}
	checkAudit(t, s, nil)
}

// testAuditRetention runs the background pruner over the store, driven by
// a fake clock and hand-fed ticks: the events older than the retention go
// at start and at each tick as the clock moves, newer ones stay.
func testAuditRetention(t *testing.T, s AuthStore) {
	const keepFor = 90 * 24 * time.Hour
	now := t0.Add(365 * 24 * time.Hour)
	clk := clock.NewFixed(now)
	day := 24 * time.Hour
	all := auditAt(t, s,
		now.Add(-200*day), now.Add(-91*day), now.Add(-keepFor-time.Second), // gone at start
		now.Add(-keepFor+time.Hour), now.Add(-89*day), // gone after two days
		now.Add(-10*day), now, // stay
	)
	p, err := retention.New(s, clk, keepFor, 2)
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time)
	type pass struct {
		n   int
		err error
	}
	passes := make(chan pass)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, ticks, func(n int, err error) { passes <- pass{n, err} })
	}()
	defer func() { cancel(); <-done }()
	wait := func(want int) {
		t.Helper()
		select {
		case got := <-passes:
			if got.err != nil || got.n != want {
				t.Fatalf("pruner pass = %d, %v; want %d deleted", got.n, got.err, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the pruner did not run")
		}
	}
	wait(3) // the pass at start
	checkAudit(t, s, all[3:])
	ticks <- clk.Now() // the clock has not moved: nothing more is old
	wait(0)
	checkAudit(t, s, all[3:])
	clk.Advance(2 * day)
	ticks <- clk.Now()
	wait(2)
	checkAudit(t, s, all[5:])
}

// testDeleteUser finds accounts by identity and deletes one, leaving the
// other; the identity may sign up again as a new account.
func testDeleteUser(t *testing.T, s AuthStore) {
	ctx := t.Context()
	a, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_a", Subject: "s1", Email: "a@x", Name: "A"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_a", Subject: "s2", Email: "b@x", Name: "B"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserByIdentity(ctx, "provider_a", "s1"); err != nil || got != a {
		t.Fatalf("UserByIdentity = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.UserByIdentity(ctx, "provider_b", "s1"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("UserByIdentity of another provider: %v, want not found", err)
	}
	if ok, err := s.DeleteUser(ctx, a.ID); err != nil || !ok {
		t.Fatalf("DeleteUser = %v, %v; want true", ok, err)
	}
	if ok, err := s.DeleteUser(ctx, a.ID); err != nil || ok {
		t.Fatalf("second DeleteUser = %v, %v; want false, no error", ok, err)
	}
	if _, err := s.User(ctx, a.ID); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("User after delete: %v, want not found", err)
	}
	if _, err := s.UserByIdentity(ctx, "provider_a", "s1"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("UserByIdentity after delete: %v, want not found", err)
	}
	if got, err := s.User(ctx, b.ID); err != nil || got != b {
		t.Fatalf("the other user after delete = %+v, %v; want %+v", got, err, b)
	}
	again, err := s.UpsertUser(ctx, auth.Identity{Provider: "provider_a", Subject: "s1"}, t0.Add(time.Hour))
	if err != nil || again.ID == a.ID || !again.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("sign-up after delete = %+v, %v; want a new account", again, err)
	}
}

// testDeleteRefreshTokens deletes every token of one user, whatever its
// state, returns them as stored, and leaves the others' tokens.
func testDeleteRefreshTokens(t *testing.T, s AuthStore) {
	ctx := t.Context()
	mk := func(hash, family, user string, issued time.Time) auth.RefreshToken {
		rt := auth.RefreshToken{Hash: hash, Family: family, UserID: user, Cat: "demo", IssuedAt: issued, FamilyExpiresAt: t0.Add(24 * time.Hour)}
		if err := s.SaveRefresh(ctx, rt); err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a1 := mk("h1", "f1", "alice", t0)
	a2 := mk("h2", "f1", "alice", t0.Add(time.Minute))
	a3 := mk("h3", "f2", "alice", t0.Add(2*time.Minute))
	b1 := mk("h4", "f3", "bob", t0)
	if _, fresh, err := s.ConsumeRefresh(ctx, "h1", t0.Add(time.Minute)); err != nil || !fresh {
		t.Fatal(err)
	}
	a1.UsedAt = t0.Add(time.Minute)
	if err := s.RevokeFamily(ctx, "f2", t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	a3.RevokedAt = t0.Add(3 * time.Minute)
	got, err := s.DeleteRefreshTokens(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := []auth.RefreshToken{a1, a2, a3}
	if !slices.EqualFunc(got, want, sameToken) {
		t.Fatalf("DeleteRefreshTokens = %+v, want %+v", got, want)
	}
	for _, h := range []string{"h1", "h2", "h3"} {
		if _, err := s.RefreshToken(ctx, h); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("token %s after delete: %v, want not found", h, err)
		}
		if _, _, err := s.ConsumeRefresh(ctx, h, t0.Add(time.Hour)); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("consume %s after delete: %v, want not found", h, err)
		}
	}
	if rt, err := s.RefreshToken(ctx, "h4"); err != nil || !sameToken(rt, b1) {
		t.Fatalf("bob's token = %+v, %v", rt, err)
	}
	if got, err := s.DeleteRefreshTokens(ctx, "alice"); err != nil || len(got) != 0 {
		t.Fatalf("second DeleteRefreshTokens = %+v, %v; want none", got, err)
	}
}

func sameToken(a, b auth.RefreshToken) bool {
	return a.Hash == b.Hash && a.Family == b.Family && a.UserID == b.UserID && a.Cat == b.Cat &&
		a.IssuedAt.Equal(b.IssuedAt) && a.FamilyExpiresAt.Equal(b.FamilyExpiresAt) && a.UsedAt.Equal(b.UsedAt) && a.RevokedAt.Equal(b.RevokedAt)
}
