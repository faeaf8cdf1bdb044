package memstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
)

// TestChatFeedsAnalytics runs the chat service on the in-memory adapters:
// two turns of one conversation are stored with their messages, and
// analytics counts them at once, agreeing with the reference aggregation.
func TestChatFeedsAnalytics(t *testing.T) {
	log := memstore.New()
	convs := memstore.NewConversations(log)
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	svc, err := service.New(service.Deps{
		Cats: memstore.NewCats(catconfig.Defaults("demo")), Conversations: convs, Turns: convs, Clock: clock.NewFixed(t0),
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Chat(t.Context(), chat.Request{Cat: "demo", UserID: "alice", Message: "Hallo"}, service.ByMode)
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Chat(t.Context(), chat.Request{
		Cat: "demo", UserID: "alice", Message: "what is the meaning of life", ConversationID: first.ConversationID,
		Context: map[string]any{"topic": "philosophy"},
	}, service.ByMode)
	if err != nil {
		t.Fatal(err)
	}
	if first.Model != "greeting" || second.Model != "default" || second.ConversationID != first.ConversationID {
		t.Fatalf("replies = %+v, %+v", first, second)
	}
	c, msgs, err := convs.Conversation(t.Context(), chat.Owner{Cat: "demo", UserID: "alice"}, first.ConversationID)
	if err != nil || c.Name != "Hallo" || len(msgs) != 4 || msgs[3].Content != second.Message {
		t.Fatalf("conversation = %+v %+v, %v", c, msgs, err)
	}
	sel := analytics.Selection{Cat: "demo", Range: analytics.Range{Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}}
	answer, err := log.Answer(t.Context(), analytics.Query{Cat: sel.Cat, Range: sel.Range}, analytics.ListOf(analytics.Topic))
	if err != nil {
		t.Fatal(err)
	}
	groups := answer.Groups[analytics.Topic]
	want := analytics.CountGroups([]analytics.Interaction{
		{Time: t0, Cat: "demo", EventKind: "api", Topic: "general"},
		{Time: t0, Cat: "demo", EventKind: "api", Topic: "philosophy"},
	}, sel, analytics.Topic)
	analytics.SortGroups(groups)
	analytics.SortGroups(want)
	if len(groups) != 2 || groups[0] != want[0] || groups[1] != want[1] {
		t.Fatalf("topic groups = %+v, want %+v", groups, want)
	}
}
