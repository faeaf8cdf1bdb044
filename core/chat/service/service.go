// Package service is the chat use case: it checks a request, loads or
// starts the user's conversation, routes the message by the CAT's chat
// mode, gets the reply from the legacy pipeline or the agent model, and
// stores the turn (messages and the analytics interaction) in one atomic
// step. It also fronts the conversation operations (list, get, rename,
// delete, search), checking their input before the store sees it. It is
// pure logic over ports.
package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/agent"
	"github.com/catsrv/catsrv/core/chat/legacy"
	"github.com/catsrv/catsrv/core/chat/router"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Deps are the ports the service works through. Model and Knowledge may be
// nil: then the agent mode is unavailable and the legacy pipeline has an
// empty knowledge base.
type Deps struct {
	Cats          ports.CatDirectory
	Conversations ports.ConversationStore
	Turns         ports.TurnRecorder
	Model         ports.ChatModel
	Knowledge     ports.KnowledgeSource
	Clock         ports.Clock
	// Toolbox gives the agent the CAT's MCP tools; nil: none.
	Toolbox ports.Toolbox
	// Searcher backs the agent's knowledge_search tool; nil: no such tool.
	Searcher agent.Searcher
	// Audit records every tool call; nil: not audited.
	Audit ports.AuditLog
	// Documents lets the qa stage answer from the CAT's documents when
	// no knowledge-base entry fits; nil: it never does.
	Documents ports.PassageSearcher
	// Feedback records ratings of answers (SetFeedback); nil: feedback
	// is unavailable.
	Feedback ports.FeedbackRecorder
	// Usage tells the token budgets (cat.budget.*) what was used; nil:
	// no budget is enforced.
	Usage ports.TokenUsage
	// BudgetRefused, when set, is called with the CAT and the budget
	// (chat.BudgetMonthly, chat.BudgetUserDaily) of each refused turn.
	BudgetRefused func(cat, budget string)
	// NewID makes conversation and message ids; random 128-bit hex when
	// nil.
	NewID func() string
}

// Service answers chat messages. Safe for concurrent use: it keeps no
// state between requests, so a configuration change reaches the next one.
type Service struct {
	d     Deps
	agent *agent.Agent
}

// New returns the service, or errs.KindInternal when a required port is
// missing (a wiring mistake).
func New(d Deps) (*Service, error) {
	if d.Cats == nil || d.Conversations == nil || d.Turns == nil || d.Clock == nil {
		return nil, errs.New(errs.KindInternal, "chat service: Cats, Conversations, Turns and Clock are required")
	}
	if d.NewID == nil {
		d.NewID = randomID
	}
	ag := agent.New(agent.Deps{Model: d.Model, Toolbox: d.Toolbox, Searcher: d.Searcher, Audit: d.Audit, Clock: d.Clock, NewID: d.NewID})
	return &Service{d: d, agent: ag}, nil
}

// Handler choices: ByMode follows cat.chat_mode (/chat); the others reach
// one handler directly (/legacy_chat, /agent_chat).
const (
	ByMode = ""
	Legacy = catconfig.ModeLegacy
	Agent  = catconfig.ModeAgent
)

// Topic and persona when neither the pipeline, the context nor the
// user's preferences name one.
const (
	DefaultTopic   = "general"
	DefaultPersona = "default"
)

// Chat answers the request with the handler chosen by handler (ByMode,
// Legacy or Agent) and stores the turn.
//
// Errors: errs.KindNotFound for an unknown CAT or an unknown or foreign
// conversation; errs.KindInvalid for an empty, oversized or unstorable
// message, model or context topic or persona, or a conversation id
// chat.CheckID refuses; errs.KindUnavailable when the model is not configured or
// failed (marked chat.ErrUpstreamFailed / chat.ErrUpstreamTimeout). When
// answering fails, the user's message is still stored.
func (s *Service) Chat(ctx context.Context, req chat.Request, handler string) (chat.Response, error) {
	return s.run(ctx, req, handler, nil)
}

// Stream is Chat with the reply delivered as it is made: onEvent gets
// each chunk of text as a delta event as the model produces it (the legacy
// pipeline, and models that cannot stream, give one), and the agent's tool
// calls, results and pending approvals as they happen; then Stream
// returns the whole response. If ctx is cancelled or onEvent fails
// mid-reply, the part received so far is still stored and the error
// returned.
func (s *Service) Stream(ctx context.Context, req chat.Request, handler string, onEvent func(chat.Event) error) (chat.Response, error) {
	if onEvent == nil {
		onEvent = func(chat.Event) error { return nil }
	}
	return s.run(ctx, req, handler, onEvent)
}

// Approvals lists the pending "ask" tool calls of the owner's turns (of
// every user's turns in the owner's CAT for an admin).
func (s *Service) Approvals(owner chat.Owner, admin bool) []agent.Pending {
	return s.agent.Approvals().List(owner.UserID, owner.Cat, admin)
}

// DecideApproval gives the decision (agent.DecisionApprove or
// agent.DecisionDeny) on a pending "ask" tool call of a turn of the
// owner's, or of anyone's in the owner's CAT for an admin.
//
// Errors: errs.KindNotFound for an unknown or foreign approval,
// errs.KindConflict for one already decided or expired, errs.KindInvalid
// for another decision.
func (s *Service) DecideApproval(owner chat.Owner, admin bool, id, decision string) error {
	return s.agent.Approvals().Decide(id, owner.UserID, owner.Cat, admin, decision, s.d.Clock.Now())
}

// answer is what a handler produced.
type answer struct {
	text   string
	model  string
	topic  string
	tokens *int
	// inputTokens and outputTokens are the model's prompt and completion
	// tokens over the turn's calls (0 for the legacy pipeline).
	inputTokens, outputTokens int64
	sources                   []chat.Source
	// steps are the agent's tool calls and results, stored before the
	// answer.
	steps []chat.Message
}

func (s *Service) run(ctx context.Context, req chat.Request, handler string, onEvent func(chat.Event) error) (chat.Response, error) {
	if handler != ByMode && handler != Legacy && handler != Agent {
		return chat.Response{}, errs.New(errs.KindInternal, "chat service: unknown handler %q", handler)
	}
	cfg, err := s.d.Cats.Cat(ctx, req.Cat)
	if err != nil {
		return chat.Response{}, err
	}
	if err := checkMessage(req.Message, cfg.Chat.MaxMessageBytes); err != nil {
		return chat.Response{}, err
	}
	if err := checkStored(req); err != nil {
		return chat.Response{}, err
	}
	route, err := routeOf(cfg, req, handler)
	if err != nil {
		return chat.Response{}, err
	}
	owner := chat.Owner{Cat: req.Cat, UserID: req.UserID}
	turn, history, err := s.open(ctx, owner, req)
	if err != nil {
		return chat.Response{}, err
	}
	// A turn past a budget is refused before anything is stored: the
	// user may send it again once the budget starts again.
	if route == catconfig.ModeAgent {
		if err := s.checkBudget(ctx, cfg, req.UserID); err != nil {
			return chat.Response{}, err
		}
	}
	start := s.d.Clock.Now()
	turn.Messages = []chat.Message{{ID: s.d.NewID(), Role: chat.RoleUser, Content: req.Message, Time: start}}

	var firstToken *time.Time
	if onEvent != nil {
		onEvent = s.timeFirstToken(onEvent, &firstToken)
	}
	a, answerErr := s.answer(ctx, cfg, req, turn.Conversation.ID, history, route, onEvent)
	for _, m := range a.steps {
		m.ID = s.d.NewID()
		turn.Messages = append(turn.Messages, m)
	}
	if a.text != "" {
		now := s.d.Clock.Now()
		answered := chat.Message{ID: s.d.NewID(), Role: chat.RoleAssistant, Content: a.text, Model: a.model, Time: now}
		turn.Messages = append(turn.Messages, answered)
		in := interaction(req, turn.Conversation.ID, a, now)
		// Named by the answer's message: feedback on the message finds
		// it, and a turn written twice (a retried transaction) counts once.
		in.InteractionID = answered.ID
		in.Usage = usage(a, start, firstToken, now)
		// Priced once its tokens are known: the CAT's cat.pricing of the model.
		in = cfg.Priced(in)
		turn.Interaction = &in
	}
	// A cancelled request still stores what it got: the user asked it.
	if err := s.d.Turns.RecordTurn(context.WithoutCancel(ctx), turn); err != nil {
		return chat.Response{}, errors.Join(answerErr, err)
	}
	if answerErr != nil {
		return chat.Response{}, answerErr
	}
	return chat.Response{
		Message: a.text, ConversationID: turn.Conversation.ID, Model: a.model,
		TokensUsed: a.tokens, Sources: a.sources,
	}, nil
}

// timeFirstToken wraps onEvent so that the time of the first delta with
// text is noted in *first.
func (s *Service) timeFirstToken(onEvent func(chat.Event) error, first **time.Time) func(chat.Event) error {
	return func(e chat.Event) error {
		if *first == nil && e.Kind == chat.EventDelta && e.Text != "" {
			t := s.d.Clock.Now()
			*first = &t
		}
		return onEvent(e)
	}
}

// usage is what the turn took: its tokens, the time from the turn's
// start to the whole answer, and to the first piece of text streamed
// (nil when nothing was streamed: a reply given in one JSON piece has no
// first token of its own). Cost is left to the analytics store, which
// prices the interaction's model when it is written.
func usage(a answer, start time.Time, firstToken *time.Time, done time.Time) analytics.Usage {
	u := analytics.Usage{InputTokens: a.inputTokens, OutputTokens: a.outputTokens, LatencyMS: millis(done.Sub(start))}
	if firstToken != nil {
		u.FirstTokenMS = millis(firstToken.Sub(start))
	}
	return u
}

func millis(d time.Duration) *float64 {
	ms := float64(max(d, 0)) / float64(time.Millisecond)
	return &ms
}

// checkMessage enforces the message rules: not blank, at most max bytes,
// storable text.
func checkMessage(message string, maxBytes int) error {
	switch {
	case strings.TrimSpace(message) == "":
		return errs.New(errs.KindInvalid, "message: must not be empty")
	case len(message) > maxBytes:
		return errs.New(errs.KindInvalid, "message: longer than %d bytes", maxBytes)
	}
	return analytics.CheckText("message", message)
}

// checkStored refuses, before any model is asked, the request's other
// text that the turn's interaction would store: a model override and the
// context's topic and persona must be storable text (analytics.CheckText).
func checkStored(req chat.Request) error {
	for _, f := range []struct{ name, value string }{
		{"model", req.Model}, {"context.topic", contextString(req.Context, "topic")},
		{"context.persona", contextString(req.Context, "persona")},
	} {
		if err := analytics.CheckText(f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

// open loads the request's conversation with its history, or starts one
// named after the message.
func (s *Service) open(ctx context.Context, owner chat.Owner, req chat.Request) (chat.Turn, []chat.Message, error) {
	if req.ConversationID != "" {
		if err := chat.CheckID(req.ConversationID); err != nil {
			return chat.Turn{}, nil, err
		}
		c, history, err := s.d.Conversations.Conversation(ctx, owner, req.ConversationID)
		if err != nil {
			return chat.Turn{}, nil, err
		}
		return chat.Turn{Conversation: c}, history, nil
	}
	now := s.d.Clock.Now()
	id := req.NewConversationID
	if id == "" {
		id = s.d.NewID()
	} else if err := chat.CheckID(id); err != nil {
		return chat.Turn{}, nil, err
	}
	c := chat.Conversation{ID: id, Owner: owner, Name: chat.NameFrom(req.Message), CreatedAt: now, UpdatedAt: now}
	return chat.Turn{Conversation: c, New: true}, nil, nil
}

// routeOf is where the message goes: the handler asked for, else the
// CAT's chat mode, a custom mode's rules choosing: agent, legacy, or one
// legacy stage.
func routeOf(cfg catconfig.Cat, req chat.Request, handler string) (string, error) {
	route := handler
	if route == ByMode {
		route = cfg.Chat.ChatMode
	}
	if route == catconfig.ModeCustom {
		r, err := router.New(cfg.Chat.Custom.Rules, cfg.Chat.Custom.DefaultRoute)
		if err != nil {
			return "", errs.Wrap(errs.KindInternal, err, "the CAT's custom routing rules are invalid")
		}
		route, _ = r.Route(req.Message, req.Context)
	}
	return route, nil
}

// answer gets the reply from the route's handler.
func (s *Service) answer(ctx context.Context, cfg catconfig.Cat, req chat.Request, conversationID string, history []chat.Message, route string, onEvent func(chat.Event) error) (answer, error) {
	switch route {
	case catconfig.ModeAgent:
		return s.runAgent(ctx, cfg, req, conversationID, history, onEvent)
	case catconfig.ModeLegacy:
		return s.legacy(ctx, cfg, req.Message, cfg.Chat.Legacy.Models, onEvent)
	default: // one legacy stage, chosen by a custom rule
		return s.legacy(ctx, cfg, req.Message, []string{route}, onEvent)
	}
}

func (s *Service) legacy(ctx context.Context, cfg catconfig.Cat, message string, stages []string, onEvent func(chat.Event) error) (answer, error) {
	var k *legacy.Knowledge
	if s.d.Knowledge != nil {
		var err error
		if k, err = s.d.Knowledge.Knowledge(ctx, cfg.Chat.Legacy.KnowledgeBase); err != nil {
			return answer{}, err
		}
	}
	p := legacy.New(k, cfg.Chat.Legacy.DefaultAnswer, cfg.Chat.Legacy.MinScore)
	var docErr error
	if s.d.Documents != nil {
		p.WithDocuments(func(message string) []chat.Source {
			src, err := s.d.Documents.Search(ctx, cfg, message)
			docErr = err
			return src
		})
	}
	r := p.Run(message, stages)
	if docErr != nil {
		return answer{}, docErr
	}
	a := answer{text: r.Answer, model: r.Model, topic: r.Topic, sources: r.Sources}
	if onEvent != nil {
		if err := onEvent(chat.Event{Kind: chat.EventDelta, Text: r.Answer}); err != nil {
			return a, err
		}
	}
	return a, nil
}

// runAgent answers with the agent loop (core/chat/agent). A reply longer
// than an interaction's answer may be is the model's failure: the loop
// bounds it (chat.ModelRequest.MaxReplyBytes).
func (s *Service) runAgent(ctx context.Context, cfg catconfig.Cat, req chat.Request, conversationID string, history []chat.Message, onEvent func(chat.Event) error) (answer, error) {
	ag := cfg.Chat.Agent
	if ag.BaseURL == "" || s.d.Model == nil {
		return answer{}, errs.New(errs.KindUnavailable, "agent mode has no model endpoint configured (cat.agent.base_url)")
	}
	model := req.Model
	if model == "" {
		model = ag.Model
	}
	if model == "" {
		return answer{}, errs.New(errs.KindUnavailable, "agent mode has no model configured (cat.agent.model)")
	}
	mr := chat.ModelRequest{
		Cat: req.Cat, ConversationID: conversationID, BaseURL: ag.BaseURL, Model: model, Temperature: ag.Temperature,
		MaxTokens: ag.MaxTokens, Timeout: time.Duration(ag.TimeoutSeconds) * time.Second,
		Messages: agentMessages(ag.Instructions, append(history[:len(history):len(history)], req.History...), req.Message), MaxReplyBytes: analytics.MaxFieldBytes,
	}
	r, err := s.agent.Run(ctx, agent.Turn{Cat: cfg, User: req.UserID, Request: mr, OnEvent: onEvent})
	if r.Model == "" {
		r.Model = model
	}
	for i := range r.Messages {
		if r.Messages[i].Role == chat.RoleAssistant {
			r.Messages[i].Model = r.Model
		}
	}
	return answer{text: r.Text, model: r.Model, tokens: r.TokensUsed, inputTokens: r.InputTokens, outputTokens: r.OutputTokens,
		sources: r.Sources, steps: r.Messages}, err
}

// agentMessages is what the agent model sees: the instructions, the
// conversation so far (stored, then the request's history), the new
// message.
func agentMessages(instructions string, history []chat.Message, message string) []chat.Message {
	var out []chat.Message
	if strings.TrimSpace(instructions) != "" {
		out = append(out, chat.Message{Role: chat.RoleSystem, Content: instructions})
	}
	// Tool calls and results go back in their own shape (assistant
	// tool_calls, tool messages), never as text.
	for _, m := range history {
		switch m.Role {
		case chat.RoleSystem:
			out = append(out, chat.Message{Role: m.Role, Content: m.Content})
		case chat.RoleUser, chat.RoleAssistant:
			out = append(out, chat.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls})
		case chat.RoleTool:
			out = append(out, chat.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName})
		}
	}
	return append(out, chat.Message{Role: chat.RoleUser, Content: message})
}

// interaction is the analytics record of an answered message.
func interaction(req chat.Request, conversationID string, a answer, at time.Time) analytics.Interaction {
	topic := a.topic
	if topic == "" {
		topic = contextString(req.Context, "topic")
	}
	if topic == "" {
		topic = DefaultTopic
	}
	persona := contextString(req.Context, "persona")
	if persona == "" {
		// The user's stored preference is not this request's input: one
		// that could not be stored is passed over, not held against every
		// chat of the user.
		if pref := strings.TrimSpace(req.PersonaPreference); analytics.CheckText("persona", pref) == nil {
			persona = pref
		}
	}
	if persona == "" {
		persona = DefaultPersona
	}
	return analytics.Interaction{
		Time: at, Cat: req.Cat, EventKind: analytics.EventKindAPI,
		Question: req.Message, Answer: a.text, Topic: topic, Model: a.model, Persona: persona,
		UserID: req.UserID, ConversationID: conversationID,
	}
}

func contextString(ctx map[string]any, key string) string {
	s, _ := ctx[key].(string)
	return strings.TrimSpace(s)
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
