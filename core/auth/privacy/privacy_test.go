package privacy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// fixture is the service over moq mocks that record the order of the
// calls, so the test sees each rule's port calls.
type fixture struct {
	svc    *privacy.Service
	calls  []string
	events []auth.AuditEvent
	denied map[string]time.Time
}

func newFixture(t *testing.T, tokens []auth.RefreshToken) *fixture {
	t.Helper()
	f := &fixture{denied: map[string]time.Time{}}
	step := func(s string) { f.calls = append(f.calls, s) }
	f.svc = privacy.New(privacy.Deps{
		UserEraser: &mocks.UserEraserMock{
			DeleteUserFunc: func(_ context.Context, id string) (bool, error) { step("user " + id); return id == "u1", nil },
			UserByIdentityFunc: func(_ context.Context, p, s string) (auth.User, error) {
				if p == auth.ProviderA && s == "42" {
					return auth.User{ID: "u1"}, nil
				}
				return auth.User{}, errs.New(errs.KindNotFound, "user not found")
			},
		},
		Refresh: &mocks.RefreshTokenEraserMock{DeleteRefreshTokensFunc: func(_ context.Context, id string) ([]auth.RefreshToken, error) {
			step("tokens " + id)
			out := tokens
			tokens = nil
			return out, nil
		}},
		Revocations: &mocks.RevocationsMock{RevokeFunc: func(_ context.Context, id string, until, _ time.Time) (bool, error) {
			step("revoke")
			f.denied[id] = until
			return true, nil
		}},
		Memory: &mocks.MemoryStoreMock{
			MemoryFunc:       func(context.Context, string) (auth.Memory, error) { return auth.Memory{UpdatedAt: t0}, nil },
			DeleteMemoryFunc: func(_ context.Context, id string) error { step("memory " + id); return nil },
		},
		Conversations: &mocks.ConversationEraserMock{DeleteConversationsOfFunc: func(_ context.Context, id string) (int, error) {
			step("conversations " + id)
			return 2, nil
		}},
		Interactions: &mocks.InteractionEraserMock{DeleteInteractionsFunc: func(_ context.Context, d analytics.Deletion, batch int) (int, error) {
			if d != (analytics.Deletion{UserID: "u1"}) || batch != 7 {
				t.Errorf("DeleteInteractions(%+v, %d), want the user's, batch 7", d, batch)
			}
			step("interactions " + d.UserID)
			return 5, nil
		}},
		Audit: &mocks.AuditLogMock{RecordFunc: func(_ context.Context, e auth.AuditEvent) error {
			step("audit")
			f.events = append(f.events, e)
			return nil
		}},
		Clock: &mocks.ClockMock{NowFunc: func() time.Time { return t0 }},
		Batch: 7,
	})
	return f
}

func TestEraseOrderRevocationsAndAudit(t *testing.T) {
	live := auth.RefreshToken{Hash: "h1", Family: "f1", UserID: "u1", FamilyExpiresAt: t0.Add(time.Hour)}
	rotated := auth.RefreshToken{Hash: "h2", Family: "f1", UserID: "u1", FamilyExpiresAt: t0.Add(time.Hour)}
	expired := auth.RefreshToken{Hash: "h3", Family: "f2", UserID: "u1", FamilyExpiresAt: t0.Add(-time.Hour)}
	f := newFixture(t, []auth.RefreshToken{live, rotated, expired})
	r, err := f.svc.Erase(t.Context(), "u1", privacy.Actor{By: privacy.ByAdmin, UserID: "root", Meta: auth.RequestMeta{IP: "10.0.0.1", UserAgent: "ua"}})
	if err != nil {
		t.Fatal(err)
	}
	want := privacy.Result{Account: true, Memory: true, Sessions: 2, Conversations: 2, Interactions: 5}
	if r != want {
		t.Fatalf("result = %+v, want %+v", r, want)
	}
	order := strings.Join(f.calls, ", ")
	if order != "tokens u1, revoke, conversations u1, interactions u1, memory u1, user u1, audit" {
		t.Fatalf("calls: %s", order)
	}
	id, until := session.Revocation(live)
	if got, ok := f.denied[id]; !ok || !got.Equal(until) || len(f.denied) != 1 {
		t.Fatalf("denied = %v, want only the live session %s until %v", f.denied, id, until)
	}
	e := f.events[0]
	if e.Kind != privacy.AuditErasure || e.UserID != "root" || e.IP != "10.0.0.1" || !e.Time.Equal(t0) {
		t.Fatalf("audit event = %+v", e)
	}
	if !strings.Contains(e.Reason, "by=admin erased="+privacy.ErasedRef("u1")+" ") || strings.Contains(e.Reason, "u1") {
		t.Fatalf("audit reason = %q: want the hashed id, never the id", e.Reason)
	}
}

func TestEraseSelfKeepsNoAddress(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.svc.Erase(t.Context(), "u1", privacy.Actor{By: privacy.BySelf, UserID: "u1", Meta: auth.RequestMeta{IP: "10.0.0.9", UserAgent: "ua"}}); err != nil {
		t.Fatal(err)
	}
	e := f.events[0]
	if e.UserID != "" || e.IP != "" || e.UserAgent != "" || !strings.HasPrefix(e.Reason, "by=self ") {
		t.Fatalf("self-erasure event = %+v: want no id, address or agent", e)
	}
}

func TestEraseRefusesEmptyID(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.svc.Erase(t.Context(), "", privacy.Actor{By: privacy.ByCLI}); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("Erase(\"\") = %v, want invalid", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("calls: %v", f.calls)
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t, nil)
	for ref, want := range map[string]string{"provider_a:42": "u1", "u_abc": "u_abc", "service:bot": "service:bot"} {
		if got, err := f.svc.Resolve(t.Context(), ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for ref, kind := range map[string]errs.Kind{"provider_a:7": errs.KindNotFound, "provider_b:": errs.KindInvalid, "": errs.KindInvalid} {
		if _, err := f.svc.Resolve(t.Context(), ref); errs.KindOf(err) != kind {
			t.Errorf("Resolve(%q) = %v, want %v", ref, err, kind)
		}
	}
}

func TestErasedRefIsOneWay(t *testing.T) {
	a, b := privacy.ErasedRef("u1"), privacy.ErasedRef("u2")
	if a == b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+32 || strings.Contains(a, "u1") {
		t.Fatalf("ErasedRef: %q, %q", a, b)
	}
}

func TestCheckUserRefusesWhatNoStoreHolds(t *testing.T) {
	for _, ref := range []string{"", "a\x00b", "caf\xc3"} {
		if err := privacy.CheckUser(ref); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("CheckUser(%q) = %v, want invalid", ref, err)
		}
	}
	f := newFixture(t, nil)
	if _, err := f.svc.Erase(t.Context(), "a\x00b", privacy.Actor{By: privacy.ByCLI}); errs.KindOf(err) != errs.KindInvalid || len(f.calls) != 0 {
		t.Fatalf("Erase of a NUL id: %v, calls %v", err, f.calls)
	}
}

// TestConversationsReadsEveryCATPageByPage: the export lists the CATs the
// person has conversations in (configured or not), pages through each,
// reads each conversation's messages, and skips one deleted meanwhile.
func TestConversationsReadsEveryCATPageByPage(t *testing.T) {
	pages := map[string][]chat.ConversationPage{
		"gone": {{Conversations: []chat.Conversation{{ID: "g1"}}, Next: "n1"}, {Conversations: []chat.Conversation{{ID: "g2"}, {ID: "deleted"}}}},
		"shop": {{Conversations: []chat.Conversation{{ID: "s1"}}}},
	}
	var asked []string
	store := &mocks.ConversationStoreMock{
		ConversationsFunc: func(_ context.Context, o chat.Owner, p chat.Page) (chat.ConversationPage, error) {
			asked = append(asked, o.Cat+"@"+p.After)
			page := pages[o.Cat][0]
			pages[o.Cat] = pages[o.Cat][1:]
			return page, nil
		},
		ConversationFunc: func(_ context.Context, o chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
			if id == "deleted" {
				return chat.Conversation{}, nil, errs.New(errs.KindNotFound, "conversation not found")
			}
			return chat.Conversation{ID: id, Owner: o}, []chat.Message{{Content: "m " + id}}, nil
		},
	}
	svc := privacy.New(privacy.Deps{Store: store, Conversations: &mocks.ConversationEraserMock{
		ConversationCatsFunc: func(context.Context, string) ([]string, error) { return []string{"gone", "shop"}, nil },
	}})
	var got []string
	for th, err := range svc.Conversations(t.Context(), "u1") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, th.Conversation.Owner.Cat+"/"+th.Conversation.ID+":"+th.Messages[0].Content)
	}
	if strings.Join(got, ",") != "gone/g1:m g1,gone/g2:m g2,shop/s1:m s1" || strings.Join(asked, ",") != "gone@,gone@n1,shop@" {
		t.Fatalf("threads %v, pages asked %v", got, asked)
	}
}
