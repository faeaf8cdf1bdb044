package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

func conversationService(t *testing.T, store *mocks.ConversationStoreMock) *service.Service {
	t.Helper()
	svc, err := service.New(service.Deps{
		Cats:          &mocks.CatDirectoryMock{CatFunc: func(context.Context, string) (catconfig.Cat, error) { return catconfig.Defaults("demo"), nil }},
		Conversations: store,
		Turns:         &mocks.TurnRecorderMock{},
		Clock:         &mocks.ClockMock{NowFunc: func() time.Time { return now }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestRename(t *testing.T) {
	alice := chat.Owner{Cat: "demo", UserID: "alice"}
	cases := []struct {
		name, give, want string // want "" means rejected
	}{
		{"trimmed", "  Trip plans ", "Trip plans"},
		{"longest", strings.Repeat("é", service.MaxNameRunes), strings.Repeat("é", service.MaxNameRunes)},
		{"blank", "   ", ""},
		{"too long", strings.Repeat("a", service.MaxNameRunes+1), ""},
		{"NUL", "a\x00b", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := &mocks.ConversationStoreMock{RenameConversationFunc: func(_ context.Context, o chat.Owner, id, name string, at time.Time) (chat.Conversation, error) {
				return chat.Conversation{ID: id, Owner: o, Name: name, UpdatedAt: at}, nil
			}}
			got, err := conversationService(t, store).Rename(t.Context(), alice, "c1", c.give)
			if c.want == "" {
				if errs.KindOf(err) != errs.KindInvalid || len(store.RenameConversationCalls()) != 0 {
					t.Fatalf("Rename = %v with %d store calls, want invalid and none", err, len(store.RenameConversationCalls()))
				}
				return
			}
			if err != nil || got.Name != c.want || !got.UpdatedAt.Equal(now) {
				t.Fatalf("Rename = %+v, %v", got, err)
			}
		})
	}
}

func TestSearchAndListCheckInput(t *testing.T) {
	alice := chat.Owner{Cat: "demo", UserID: "alice"}
	store := &mocks.ConversationStoreMock{
		SearchConversationsFunc: func(context.Context, chat.Owner, string, int) ([]chat.SearchHit, error) { return nil, nil },
		ConversationsFunc: func(context.Context, chat.Owner, chat.Page) (chat.ConversationPage, error) {
			return chat.ConversationPage{}, nil
		},
	}
	svc := conversationService(t, store)
	cases := []struct {
		name string
		call func() error
		ok   bool
	}{
		{"search", func() error { _, err := svc.Search(t.Context(), alice, "refund", 5); return err }, true},
		{"search without words", func() error { _, err := svc.Search(t.Context(), alice, "?", 5); return err }, false},
		{"search limit", func() error { _, err := svc.Search(t.Context(), alice, "refund", 101); return err }, false},
		{"list", func() error { _, err := svc.Conversations(t.Context(), alice, chat.Page{Limit: 10}); return err }, true},
		{"list bad cursor", func() error { _, err := svc.Conversations(t.Context(), alice, chat.Page{After: "%%"}); return err }, false},
		{"list bad limit", func() error { _, err := svc.Conversations(t.Context(), alice, chat.Page{Limit: -1}); return err }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(store.SearchConversationsCalls()) + len(store.ConversationsCalls())
			err := c.call()
			after := len(store.SearchConversationsCalls()) + len(store.ConversationsCalls())
			if c.ok && (err != nil || after != before+1) {
				t.Fatalf("err %v, store calls %d", err, after-before)
			}
			if !c.ok && (errs.KindOf(err) != errs.KindInvalid || after != before) {
				t.Fatalf("err %v, store calls %d; want invalid before the store", err, after-before)
			}
		})
	}
}

// An id no store can hold is malformed input, refused before any store
// is asked (issue 10, item 4): with a NUL byte the SQL stores failed.
func TestUnstorableIDsNeverReachTheStore(t *testing.T) {
	alice := chat.Owner{Cat: "demo", UserID: "alice"}
	for _, id := range []string{"abc\x00x", "abc\xffx", "caf\xc3"} {
		store := &mocks.ConversationStoreMock{} // any call panics: no func is set
		svc := conversationService(t, store)
		_, _, err := svc.Conversation(t.Context(), alice, id)
		if errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Conversation(%q) = %v, want invalid", id, err)
		}
		if err := svc.Delete(t.Context(), alice, id); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Delete(%q) = %v, want invalid", id, err)
		}
		if _, err := svc.Rename(t.Context(), alice, id, "name"); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Rename(%q) = %v, want invalid", id, err)
		}
		cursor := chat.CursorOf(chat.Conversation{ID: id, UpdatedAt: now})
		if _, err := svc.Conversations(t.Context(), alice, chat.Page{After: cursor}); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Conversations after a cursor of %q = %v, want invalid", id, err)
		}
	}
}
