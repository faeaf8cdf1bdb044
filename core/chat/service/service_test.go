package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/legacy"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture wires the service to mocks: a CAT "demo" with cfg, a store
// holding one conversation "c1" of alice, a model answering "agent says
// hi" (streamed in two pieces), and a knowledge base of one entry.
type fixture struct {
	cfg   catconfig.Cat
	model *mocks.ChatModelMock
	turns []chat.Turn
	svc   *service.Service
	// clock is what the service reads the time from: now, unless a test
	// changes it.
	clock func() time.Time
	ids   int
}

// newID names the first thing made "new-id" (a request's conversation),
// the next ones id-2, id-3, ...
func (f *fixture) newID() string {
	f.ids++
	if f.ids == 1 {
		return "new-id"
	}
	return fmt.Sprintf("id-%d", f.ids)
}

func newFixture(t *testing.T, change func(*catconfig.Cat), deps ...func(*service.Deps)) *fixture {
	t.Helper()
	f := &fixture{cfg: catconfig.Defaults("demo"), clock: func() time.Time { return now }}
	f.cfg.Chat.Agent.BaseURL = "http://model.test/v1"
	f.cfg.Chat.Agent.Model = "gpt-test"
	f.cfg.Chat.Legacy.KnowledgeBase = "kb.yaml"
	if change != nil {
		change(&f.cfg)
	}
	if err := f.cfg.Validate(); err != nil {
		t.Fatalf("fixture config: %v", err)
	}
	kb, err := legacy.NewKnowledge(
		[]legacy.Entry{{ID: "pw", Question: "How do I reset my password", Answer: "Use the reset link."}},
		[]legacy.Intent{{Name: "billing", Keywords: []string{"invoice"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	f.model = &mocks.ChatModelMock{
		CompleteFunc: func(context.Context, chat.ModelRequest) (chat.Completion, error) {
			tokens := 7
			return chat.Completion{Text: "agent says hi", Model: "gpt-test-0601", TokensUsed: &tokens}, nil
		},
		StreamFunc: func(_ context.Context, _ chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
			for _, d := range []string{"agent says", " hi"} {
				if err := onDelta(d); err != nil {
					return chat.Completion{Text: "agent says"}, err
				}
			}
			return chat.Completion{Text: "agent says hi", Model: "gpt-test-0601"}, nil
		},
	}
	history := []chat.Message{
		{Role: chat.RoleUser, Content: "earlier question", Time: now.Add(-time.Hour)},
		{Role: chat.RoleAssistant, Content: "earlier answer", Model: "qa", Time: now.Add(-time.Hour)},
	}
	alice := chat.Owner{Cat: "demo", UserID: "alice"}
	d := service.Deps{
		Cats: &mocks.CatDirectoryMock{CatFunc: func(_ context.Context, name string) (catconfig.Cat, error) {
			if name != "demo" {
				return catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found in configuration", name)
			}
			return f.cfg, nil
		}},
		Conversations: &mocks.ConversationStoreMock{ConversationFunc: func(_ context.Context, o chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
			if o != alice || id != "c1" {
				return chat.Conversation{}, nil, errs.New(errs.KindNotFound, "conversation not found")
			}
			return chat.Conversation{ID: "c1", Owner: alice, Name: "Earlier"}, history, nil
		}},
		Turns: &mocks.TurnRecorderMock{RecordTurnFunc: func(ctx context.Context, turn chat.Turn) error {
			if ctx.Err() != nil {
				t.Errorf("turn recorded with a done context: %v", ctx.Err())
			}
			f.turns = append(f.turns, turn)
			return nil
		}},
		Model: f.model,
		Knowledge: &mocks.KnowledgeSourceMock{KnowledgeFunc: func(_ context.Context, path string) (*legacy.Knowledge, error) {
			if path != "kb.yaml" {
				t.Errorf("knowledge path %q", path)
			}
			return kb, nil
		}},
		Clock: &mocks.ClockMock{NowFunc: func() time.Time { return f.clock() }},
		NewID: f.newID,
	}
	for _, change := range deps {
		change(&d)
	}
	svc, err := service.New(d)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func request(message string) chat.Request {
	return chat.Request{Cat: "demo", UserID: "alice", Message: message}
}

func TestRejectsBadRequests(t *testing.T) {
	cases := []struct {
		name string
		req  chat.Request
		kind errs.Kind
	}{
		{"empty message", request(""), errs.KindInvalid},
		{"blank message", request(" \n\t"), errs.KindInvalid},
		{"oversized message", request(strings.Repeat("a", 33)), errs.KindInvalid},
		{"invalid UTF-8", request("a\xffb"), errs.KindInvalid},
		{"NUL byte", request("a\x00b"), errs.KindInvalid},
		{"unknown CAT", chat.Request{Cat: "nope", UserID: "alice", Message: "hi"}, errs.KindNotFound},
		{"unknown conversation", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", ConversationID: "zzz"}, errs.KindNotFound},
		{"foreign conversation", chat.Request{Cat: "demo", UserID: "bob", Message: "hi", ConversationID: "c1"}, errs.KindNotFound},
		{"conversation id with a NUL byte", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", ConversationID: "c1\x00"}, errs.KindInvalid},
		{"conversation id not UTF-8", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", ConversationID: "c1\xff"}, errs.KindInvalid},
		{"model with a NUL byte", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", Model: "m\x00"}, errs.KindInvalid},
		{"topic with a NUL byte", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", Context: map[string]any{"topic": "t\x00"}}, errs.KindInvalid},
		{"persona not UTF-8", chat.Request{Cat: "demo", UserID: "alice", Message: "hi", Context: map[string]any{"persona": "p\xff"}}, errs.KindInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(c *catconfig.Cat) { c.Chat.MaxMessageBytes = 32 })
			_, err := f.svc.Chat(t.Context(), c.req, service.ByMode)
			if errs.KindOf(err) != c.kind {
				t.Fatalf("Chat = %v, want kind %v", err, c.kind)
			}
			if len(f.turns) != 0 || len(f.model.CompleteCalls()) != 0 {
				t.Fatalf("a rejected request stored %d turns, called the model %d times", len(f.turns), len(f.model.CompleteCalls()))
			}
		})
	}
	f := newFixture(t, func(c *catconfig.Cat) { c.Chat.MaxMessageBytes = 32 })
	if _, err := f.svc.Chat(t.Context(), request(strings.Repeat("a", 32)), service.ByMode); err != nil {
		t.Fatalf("a message of exactly the limit: %v", err)
	}
}

func TestRoutes(t *testing.T) {
	rules := []string{"keyword invoice => agent", "pattern ^(?i)hey bot => greeting", "context channel=faq => qa"}
	cases := []struct {
		name      string
		mode      string
		handler   string
		message   string
		context   map[string]any
		wantModel string
		wantText  string
	}{
		{"legacy greeting", "legacy", service.ByMode, "Bonjour", nil, "greeting", "Bonjour ! Comment puis-je vous aider ?"},
		{"legacy qa", "legacy", service.ByMode, "how can I reset my password", nil, "qa", "Use the reset link."},
		{"legacy default", "legacy", service.ByMode, "tell me a joke", nil, "default", catconfig.DefaultDefaultAnswer},
		{"agent", "agent", service.ByMode, "tell me a joke", nil, "gpt-test-0601", "agent says hi"},
		{"legacy handler ignores the mode", "agent", service.Legacy, "how can I reset my password", nil, "qa", "Use the reset link."},
		{"agent handler ignores the mode", "legacy", service.Agent, "hello", nil, "gpt-test-0601", "agent says hi"},
		{"custom keyword to agent", "custom", service.ByMode, "my invoice is wrong", nil, "gpt-test-0601", "agent says hi"},
		{"custom pattern to one stage", "custom", service.ByMode, "hey bot, reset my password", nil, "default", catconfig.DefaultDefaultAnswer},
		{"custom context to qa", "custom", service.ByMode, "how can I reset my password", map[string]any{"channel": "faq"}, "qa", "Use the reset link."},
		{"custom default route", "custom", service.ByMode, "hello", nil, "greeting", "Hello! How can I help you today?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *catconfig.Cat) {
				cfg.Chat.ChatMode = c.mode
				cfg.Chat.Custom.Rules = rules
				cfg.Chat.Custom.DefaultRoute = "legacy"
			})
			req := request(c.message)
			req.Context = c.context
			resp, err := f.svc.Chat(t.Context(), req, c.handler)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Model != c.wantModel || resp.Message != c.wantText || resp.ConversationID != "new-id" {
				t.Fatalf("response = %+v, want model %q text %q", resp, c.wantModel, c.wantText)
			}
			if len(f.turns) != 1 || f.turns[0].Interaction == nil || f.turns[0].Interaction.Model != c.wantModel {
				t.Fatalf("turns = %+v", f.turns)
			}
		})
	}
}

func TestNewConversationTurn(t *testing.T) {
	f := newFixture(t, nil)
	msg := "  Please reset my password, I forgot it after the long holiday in the mountains  "
	resp, err := f.svc.Chat(t.Context(), request(msg), service.ByMode)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Sources) != 1 || resp.Sources[0].ID != "pw" || resp.Sources[0].Question != "How do I reset my password" {
		t.Fatalf("sources = %+v", resp.Sources)
	}
	turn := f.turns[0]
	wantConv := chat.Conversation{ID: "new-id", Owner: chat.Owner{Cat: "demo", UserID: "alice"}, Name: chat.NameFrom(msg), CreatedAt: now, UpdatedAt: now}
	if !turn.New || turn.Conversation != wantConv {
		t.Fatalf("conversation = %+v new %v, want %+v", turn.Conversation, turn.New, wantConv)
	}
	wantMsgs := []chat.Message{
		{ID: "id-2", Role: chat.RoleUser, Content: msg, Time: now},
		{ID: "id-3", Role: chat.RoleAssistant, Content: "Use the reset link.", Model: "qa", Time: now},
	}
	if !reflect.DeepEqual(turn.Messages, wantMsgs) {
		t.Fatalf("messages = %+v", turn.Messages)
	}
	want := analytics.Interaction{
		Time: now, Cat: "demo", EventKind: "api", Question: msg, Answer: "Use the reset link.",
		Topic: "general", Model: "qa", Persona: "default", UserID: "alice", ConversationID: "new-id", InteractionID: "id-3",
		Usage: analytics.Usage{LatencyMS: new(0.0)},
	}
	if !reflect.DeepEqual(*turn.Interaction, want) {
		t.Fatalf("interaction = %+v, want %+v", *turn.Interaction, want)
	}
	if err := turn.Interaction.Validate(); err != nil {
		t.Fatalf("the interaction would not be stored: %v", err)
	}
}

func TestTopicAndPersona(t *testing.T) {
	cases := []struct {
		name        string
		message     string
		context     map[string]any
		preference  string
		wantTopic   string
		wantPersona string
	}{
		{"defaults", "hello there", nil, "", "general", "default"},
		{"intent stage wins over the context", "my invoice", map[string]any{"topic": "other"}, "", "billing", "default"},
		{"context topic", "hello", map[string]any{"topic": "onboarding"}, "", "onboarding", "default"},
		{"context persona wins", "hello", map[string]any{"persona": "student"}, "teacher", "general", "student"},
		{"memory preference", "hello", map[string]any{"persona": 42}, "teacher", "general", "teacher"},
		{"unstorable memory preference is ignored", "hello", nil, "tea\x00cher", "general", "default"},
		{"memory preference not UTF-8 is ignored", "hello", nil, "tea\xffcher", "general", "default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			req := request(c.message)
			req.Context, req.PersonaPreference = c.context, c.preference
			if _, err := f.svc.Chat(t.Context(), req, service.ByMode); err != nil {
				t.Fatal(err)
			}
			in := f.turns[0].Interaction
			if in.Topic != c.wantTopic || in.Persona != c.wantPersona {
				t.Fatalf("topic %q persona %q, want %q %q", in.Topic, in.Persona, c.wantTopic, c.wantPersona)
			}
		})
	}
}

func TestAgentSeesInstructionsAndHistory(t *testing.T) {
	f := newFixture(t, func(c *catconfig.Cat) {
		c.Chat.ChatMode = catconfig.ModeAgent
		c.Chat.Agent.Instructions = "Be brief."
	})
	req := request("and now?")
	req.ConversationID, req.Model = "c1", "override-model"
	resp, err := f.svc.Chat(t.Context(), req, service.ByMode)
	if err != nil {
		t.Fatal(err)
	}
	calls := f.model.CompleteCalls()
	if len(calls) != 1 {
		t.Fatalf("model called %d times", len(calls))
	}
	mr := calls[0].Req
	want := []chat.Message{
		{Role: chat.RoleSystem, Content: "Be brief."},
		{Role: chat.RoleUser, Content: "earlier question"},
		{Role: chat.RoleAssistant, Content: "earlier answer"},
		{Role: chat.RoleUser, Content: "and now?"},
	}
	if !reflect.DeepEqual(mr.Messages, want) || mr.Model != "override-model" || mr.BaseURL != "http://model.test/v1" ||
		mr.Temperature != 0.7 || mr.MaxTokens != 1024 || mr.Timeout != time.Minute {
		t.Fatalf("model request = %+v", mr)
	}
	if resp.ConversationID != "c1" || resp.TokensUsed == nil || *resp.TokensUsed != 7 || f.turns[0].New {
		t.Fatalf("response = %+v, turn new %v", resp, f.turns[0].New)
	}
}

func TestAgentFailuresKeepTheMessage(t *testing.T) {
	upstream := errs.Wrap(errs.KindUnavailable, chat.ErrUpstreamFailed, "the model service failed")
	cases := []struct {
		name    string
		change  func(*catconfig.Cat)
		err     error
		wantMsg string
		is      error
	}{
		{"no endpoint", func(c *catconfig.Cat) { c.Chat.Agent.BaseURL = "" }, nil, "agent mode has no model endpoint configured", nil},
		{"no model", func(c *catconfig.Cat) { c.Chat.Agent.Model = "" }, nil, "no model configured", nil},
		{"upstream failure", nil, upstream, "the model service failed", chat.ErrUpstreamFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *catconfig.Cat) {
				cfg.Chat.ChatMode = catconfig.ModeAgent
				if c.change != nil {
					c.change(cfg)
				}
			})
			f.model.CompleteFunc = func(context.Context, chat.ModelRequest) (chat.Completion, error) { return chat.Completion{}, c.err }
			_, err := f.svc.Chat(t.Context(), request("question"), service.ByMode)
			if errs.KindOf(err) != errs.KindUnavailable || !strings.Contains(errs.PublicMessage(err, ""), c.wantMsg) {
				t.Fatalf("Chat = %v, want unavailable %q", err, c.wantMsg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %v is not %v", err, c.is)
			}
			if len(f.turns) != 1 || len(f.turns[0].Messages) != 1 || f.turns[0].Messages[0].Content != "question" || f.turns[0].Interaction != nil {
				t.Fatalf("turns = %+v, want the user's message alone", f.turns)
			}
		})
	}
}

func TestStream(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		wantDeltas []string
		wantText   string
	}{
		{"agent streams pieces", catconfig.ModeAgent, []string{"agent says", " hi"}, "agent says hi"},
		{"legacy gives one delta", catconfig.ModeLegacy, []string{"Hello! How can I help you today?"}, "Hello! How can I help you today?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *catconfig.Cat) { cfg.Chat.ChatMode = c.mode })
			var deltas []string
			resp, err := f.svc.Stream(t.Context(), request("hello"), service.ByMode, func(e chat.Event) error {
				deltas = append(deltas, e.Text)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(deltas, c.wantDeltas) || resp.Message != c.wantText || f.turns[0].Interaction.Answer != c.wantText {
				t.Fatalf("deltas %q, response %+v", deltas, resp)
			}
		})
	}
}

func TestStreamCancelStoresThePartialReply(t *testing.T) {
	f := newFixture(t, func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent })
	ctx, cancel := context.WithCancel(t.Context())
	f.model.StreamFunc = func(ctx context.Context, _ chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
		text := ""
		for _, d := range []string{"Once", " upon", " a time"} {
			if err := ctx.Err(); err != nil {
				return chat.Completion{Text: text}, err
			}
			if err := onDelta(d); err != nil {
				return chat.Completion{Text: text}, err
			}
			text += d
		}
		return chat.Completion{Text: text}, nil
	}
	var got []string
	_, err := f.svc.Stream(ctx, request("tell a story"), service.ByMode, func(e chat.Event) error {
		got = append(got, e.Text)
		if len(got) == 2 {
			cancel() // the client goes away after two pieces
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, want context.Canceled", err)
	}
	if len(f.turns) != 1 {
		t.Fatalf("turns = %d, want 1", len(f.turns))
	}
	turn := f.turns[0]
	if len(turn.Messages) != 2 || turn.Messages[1].Content != "Once upon" || turn.Interaction == nil || turn.Interaction.Answer != "Once upon" || turn.Interaction.Model != "gpt-test" {
		t.Fatalf("stored turn = %+v", turn)
	}
}

func TestUnknownHandler(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.svc.Chat(t.Context(), request("hi"), "qa"); errs.KindOf(err) != errs.KindInternal || len(f.turns) != 0 {
		t.Fatalf("Chat with handler qa = %v, %d turns", err, len(f.turns))
	}
}

func TestNewRequiresPorts(t *testing.T) {
	if _, err := service.New(service.Deps{}); errs.KindOf(err) != errs.KindInternal {
		t.Fatalf("New(empty) = %v", err)
	}
}

// TestRequestHistoryAndNamedConversation: the request's history reaches
// the agent model after the stored conversation and is not stored; a new
// conversation takes the id the caller named; legacy routing ignores the
// history.
func TestRequestHistoryAndNamedConversation(t *testing.T) {
	f := newFixture(t, func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent })
	req := request("and now?")
	req.ConversationID = "c1"
	req.History = []chat.Message{{Role: chat.RoleSystem, Content: "Speak French."}, {Role: chat.RoleUser, Content: "client question"}}
	if _, err := f.svc.Chat(t.Context(), req, service.ByMode); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range f.model.CompleteCalls()[0].Req.Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"system:" + f.cfg.Chat.Agent.Instructions, "user:earlier question", "assistant:earlier answer",
		"system:Speak French.", "user:client question", "user:and now?"}
	if !reflect.DeepEqual(got, want) || len(f.turns[0].Messages) != 2 {
		t.Fatalf("model saw %q, want %q; stored %+v", got, want, f.turns[0].Messages)
	}

	req = request("How do I reset my password")
	req.NewConversationID, req.History = "named-by-caller", []chat.Message{{Role: chat.RoleUser, Content: "ignored"}}
	resp, err := f.svc.Chat(t.Context(), req, service.Legacy)
	if err != nil || resp.ConversationID != "named-by-caller" || !f.turns[1].New || resp.Message != "Use the reset link." {
		t.Fatalf("named: %+v %v", resp, err)
	}
	req.NewConversationID = "bad\x00id"
	if _, err := f.svc.Chat(t.Context(), req, service.Legacy); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("a NUL in the named id: %v", err)
	}
}
