package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

// fakeFeedback is a feedback recorder over the interactions it is told
// of: unknown ids are not found.
type fakeFeedback struct {
	known map[string]bool
	set   map[string]analytics.Feedback
}

func (f *fakeFeedback) SetFeedback(_ context.Context, cat, id string, fb analytics.Feedback) error {
	if !f.known[cat+"/"+id] {
		return errs.New(errs.KindNotFound, "interaction %q not found", id)
	}
	if fb == (analytics.Feedback{}) {
		delete(f.set, cat+"/"+id)
		return nil
	}
	f.set[cat+"/"+id] = fb
	return nil
}

// TestSetFeedback: the owner rates an answer of theirs, again (replacing)
// and removes it; the rating, reason and comment are checked against the
// rules and the CAT's reasons; only a final answer takes feedback, and
// only its owner can give it.
func TestSetFeedback(t *testing.T) {
	alice := chat.Owner{Cat: "demo", UserID: "alice"}
	cfg := catconfig.Defaults("demo")
	cfg.Chat.Feedback.Reasons = []string{"wrong", "unsafe"}
	messages := []chat.Message{
		{ID: "u1", Role: chat.RoleUser, Content: "files?"},
		{ID: "s1", Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c", Name: "files__list"}}},
		{ID: "t1", Role: chat.RoleTool, Content: "a.txt", ToolCallID: "c"},
		{ID: "a1", Role: chat.RoleAssistant, Content: "One file."},
		{ID: "old", Role: chat.RoleAssistant, Content: "An answer without an interaction."},
	}
	rec := &fakeFeedback{known: map[string]bool{"demo/a1": true}, set: map[string]analytics.Feedback{}}
	deps := service.Deps{
		Cats: &mocks.CatDirectoryMock{CatFunc: func(_ context.Context, name string) (catconfig.Cat, error) {
			if name != "demo" {
				return catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found in configuration", name)
			}
			return cfg, nil
		}},
		Conversations: &mocks.ConversationStoreMock{ConversationFunc: func(_ context.Context, o chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
			if o != alice || id != "c1" {
				return chat.Conversation{}, nil, errs.New(errs.KindNotFound, "conversation not found")
			}
			return chat.Conversation{ID: "c1", Owner: alice}, messages, nil
		}},
		Turns: &mocks.TurnRecorderMock{}, Clock: &mocks.ClockMock{}, Feedback: rec,
	}
	svc, err := service.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	up := analytics.Feedback{Rating: analytics.RatingUp}
	down := analytics.Feedback{Rating: analytics.RatingDown, Reason: "wrong", Comment: strings.Repeat("é", analytics.MaxFeedbackCommentChars)}
	if err := svc.SetFeedback(ctx, alice, "c1", "a1", up); err != nil || rec.set["demo/a1"] != up {
		t.Fatalf("up: %v, stored %+v", err, rec.set)
	}
	if err := svc.SetFeedback(ctx, alice, "c1", "a1", down); err != nil || rec.set["demo/a1"] != down {
		t.Fatalf("down replacing up: %v, stored %+v", err, rec.set)
	}
	if err := svc.SetFeedback(ctx, alice, "c1", "a1", analytics.Feedback{}); err != nil || len(rec.set) != 0 {
		t.Fatalf("removal: %v, stored %+v", err, rec.set)
	}
	cases := []struct {
		name      string
		owner     chat.Owner
		conv, msg string
		f         analytics.Feedback
		want      errs.Kind
	}{
		{"no rating", alice, "c1", "a1", analytics.Feedback{Comment: "x"}, errs.KindInvalid},
		{"other rating", alice, "c1", "a1", analytics.Feedback{Rating: "meh"}, errs.KindInvalid},
		{"unknown reason", alice, "c1", "a1", analytics.Feedback{Rating: "down", Reason: "boring"}, errs.KindInvalid},
		{"long comment", alice, "c1", "a1", analytics.Feedback{Rating: "down", Comment: strings.Repeat("x", analytics.MaxFeedbackCommentChars+1)}, errs.KindInvalid},
		{"NUL in comment", alice, "c1", "a1", analytics.Feedback{Rating: "down", Comment: "a\x00"}, errs.KindInvalid},
		{"user message", alice, "c1", "u1", up, errs.KindInvalid},
		{"tool message", alice, "c1", "t1", up, errs.KindInvalid},
		{"tool-calling step", alice, "c1", "s1", up, errs.KindInvalid},
		{"message id with NUL", alice, "c1", "a\x001", up, errs.KindInvalid},
		{"unknown message", alice, "c1", "zz", up, errs.KindNotFound},
		{"answer without interaction", alice, "c1", "old", up, errs.KindNotFound},
		{"another user", chat.Owner{Cat: "demo", UserID: "bob"}, "c1", "a1", up, errs.KindNotFound},
		{"unknown CAT", chat.Owner{Cat: "nope", UserID: "alice"}, "c1", "a1", up, errs.KindNotFound},
		{"removal by another user", chat.Owner{Cat: "demo", UserID: "bob"}, "c1", "a1", analytics.Feedback{}, errs.KindNotFound},
	}
	for _, c := range cases {
		if err := svc.SetFeedback(ctx, c.owner, c.conv, c.msg, c.f); errs.KindOf(err) != c.want {
			t.Errorf("%s: %v, want kind %v", c.name, err, c.want)
		}
	}
	if len(rec.set) != 0 {
		t.Errorf("refused feedback stored: %+v", rec.set)
	}
	deps.Feedback = nil
	bare, err := service.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.SetFeedback(ctx, alice, "c1", "a1", up); errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("without a recorder: %v, want unavailable", err)
	}
}
