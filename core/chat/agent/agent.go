// Package agent is the agent mode's loop: each step sends the
// conversation, the instructions and the tools the policy allows to the
// model, runs every tool call of the reply concurrently (each bounded by
// cat.agent.tool_timeout_seconds, an "ask" call first waiting for a
// person's decision), and feeds the results back, until the model answers
// or cat.agent.max_steps is reached, when one last call without tools asks
// for the answer. A tool that fails in any way is a result the model sees,
// never a failed turn. It is pure logic over ports.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/toolpolicy"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

// Searcher finds knowledge for the built-in knowledge_search tool; its
// hits become the reply's sources.
type Searcher interface {
	Search(ctx context.Context, cat catconfig.Cat, query string) ([]chat.Source, error)
}

// KnowledgeSearch is the built-in tool over the CAT's knowledge.
const KnowledgeSearch = "knowledge_search"

// AuditToolCall is the audit event of every tool call the model asked
// for: Provider is the MCP server ("builtin" for a built-in tool), Reason
// the tool, policy, decision, outcome and duration (never the arguments).
const AuditToolCall auth.AuditKind = "tool_call"

// EventContentBytes bounds a tool result in a tool_result event.
const EventContentBytes = 2 << 10

// finalPrompt is the system message of the last call at max_steps.
const finalPrompt = "You have used every tool step this turn may take. Answer the user now with what you have found, without calling tools."

// noAnswer is the reply when even the last call gave no text.
const noAnswer = "I could not finish this answer within the steps allowed."

// Deps are the ports the loop works through. Toolbox, Searcher and Audit
// may be nil: no MCP tools, no knowledge_search, no audit lines.
type Deps struct {
	Model     ports.ChatModel
	Toolbox   ports.Toolbox
	Searcher  Searcher
	Approvals *Approvals
	Audit     ports.AuditLog
	Clock     ports.Clock
	// NewID makes approval and missing tool call ids.
	NewID func() string
}

// Agent runs turns. Safe for concurrent use.
type Agent struct{ d Deps }

// New returns the loop; Approvals defaults to a registry of its own.
func New(d Deps) *Agent {
	if d.Approvals == nil {
		d.Approvals = NewApprovals()
	}
	return &Agent{d: d}
}

// Approvals is the registry of the loop's pending "ask" calls.
func (a *Agent) Approvals() *Approvals { return a.d.Approvals }

// Turn is one turn of the loop.
type Turn struct {
	Cat  catconfig.Cat
	User string
	// Request is the model call's endpoint, parameters and messages
	// (instructions, history, the user's message); Tools is filled here.
	Request chat.ModelRequest
	// OnEvent, when not nil, streams the turn: deltas as the model writes,
	// tool calls, results and approvals as they happen. Never called
	// concurrently.
	OnEvent func(chat.Event) error
}

// Result is what a turn produced. On failure it holds what was done
// before: the completed steps' messages and the failed step's text.
type Result struct {
	Text       string
	Model      string
	TokensUsed *int
	// InputTokens and OutputTokens are the prompt and completion tokens
	// of every step's call, summed.
	InputTokens  int64
	OutputTokens int64
	// FinishReason is why the last call's model stopped; empty when it
	// did not say.
	FinishReason string
	// Messages are the steps' assistant messages with tool calls and the
	// tool messages answering them, in order (the final answer is not
	// among them).
	Messages []chat.Message
	Sources  []chat.Source
	Steps    int
}

// tool is one tool offered to the model, with the policy's decision.
type tool struct {
	spec     chat.ToolSpec
	decision string
	pattern  string
}

// Run runs the loop.
func (a *Agent) Run(ctx context.Context, t Turn) (Result, error) {
	ag := t.Cat.Chat.Agent
	scope := chat.ToolScope{Cat: t.Cat.Name, User: t.User}
	tools, specs := a.tools(ctx, t.Cat, scope)
	maxSteps := max(ag.MaxSteps, 1)
	messages := t.Request.Messages
	var res Result
	var sources sourceList
	for step := 1; ; step++ {
		req := t.Request
		final := step >= maxSteps || len(specs) == 0
		if !final {
			req.Tools = specs
		}
		if step >= maxSteps && step > 1 {
			messages = append(messages, chat.Message{Role: chat.RoleSystem, Content: finalPrompt})
		}
		req.Messages = messages
		c, err := a.complete(ctx, req, t.OnEvent)
		res.Steps = step
		res.TokensUsed = addTokens(res.TokensUsed, c.TokensUsed)
		res.InputTokens += c.InputTokens
		res.OutputTokens += c.OutputTokens
		res.FinishReason = c.FinishReason
		if c.Model != "" {
			res.Model = c.Model
		}
		if err != nil {
			res.Text = c.Text
			res.Sources = sources.list()
			return res, err
		}
		if final || len(c.ToolCalls) == 0 {
			res.Text = c.Text
			if res.Text == "" && final && step > 1 {
				res.Text = noAnswer
				if err := emit(t.OnEvent, chat.Event{Kind: chat.EventDelta, Text: noAnswer}); err != nil {
					return res, err
				}
			}
			res.Sources = sources.list()
			// A [n] marker must name a source the turn was given.
			res.Text, _ = knowledge.CheckCitations(res.Text, len(res.Sources))
			return res, nil
		}
		calls := a.named(c.ToolCalls, step)
		asked := chat.Message{Role: chat.RoleAssistant, Content: c.Text, Model: res.Model, Time: a.d.Clock.Now(), ToolCalls: calls}
		results, err := a.runCalls(ctx, t, scope, tools, calls, &sources)
		messages = append(messages, asked)
		messages = append(messages, results...)
		res.Messages = append(res.Messages, asked)
		res.Messages = append(res.Messages, results...)
		if err != nil {
			res.Sources = sources.list()
			return res, err
		}
	}
}

// complete makes one model call, streamed when the turn is.
func (a *Agent) complete(ctx context.Context, req chat.ModelRequest, onEvent func(chat.Event) error) (chat.Completion, error) {
	if onEvent == nil {
		return a.d.Model.Complete(ctx, req)
	}
	return a.d.Model.Stream(ctx, req, func(d string) error {
		return onEvent(chat.Event{Kind: chat.EventDelta, Text: d})
	})
}

// tools lists the tools the policy lets the model see: the built-in
// knowledge search and the CAT's MCP tools, less those denied.
func (a *Agent) tools(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope) (map[string]tool, []chat.ToolSpec) {
	policy, err := toolpolicy.New(cat.Chat.Agent.Tools)
	if err != nil {
		policy = toolpolicy.Policy{{Pattern: "*", Decision: toolpolicy.Deny}} // validated at load; never guess
	}
	var all []chat.ToolSpec
	if a.d.Searcher != nil {
		all = append(all, chat.ToolSpec{
			Name: KnowledgeSearch, Tool: KnowledgeSearch,
			Description: "Search this assistant's knowledge base and documents. Returns the best matching passages with their text; cite a passage you use by its number n as [n].",
			Parameters:  []byte(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for."}},"required":["query"]}`),
		})
	}
	if a.d.Toolbox != nil && len(cat.Chat.Agent.MCPServers) > 0 {
		if mcp, err := a.d.Toolbox.Tools(ctx, cat, scope); err == nil {
			all = append(all, mcp...)
		}
	}
	byName := map[string]tool{}
	var specs []chat.ToolSpec
	for _, s := range all {
		d, pattern := policy.Decide(toolpolicy.Key(s.Server, s.Tool))
		if d == toolpolicy.Deny {
			continue
		}
		if _, dup := byName[s.Name]; dup {
			continue
		}
		byName[s.Name] = tool{spec: s, decision: d, pattern: pattern}
		specs = append(specs, s)
	}
	return byName, specs
}

// named gives every call an id (a model may leave it out).
func (a *Agent) named(calls []chat.ToolCall, step int) []chat.ToolCall {
	out := make([]chat.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", step, i)
		}
		out[i] = c
	}
	return out
}

// runCalls runs the calls concurrently and returns their tool messages in
// the calls' order. Events are serialized; an event that cannot be sent
// (the client left) ends the turn once the calls are done.
func (a *Agent) runCalls(ctx context.Context, t Turn, scope chat.ToolScope, tools map[string]tool, calls []chat.ToolCall, sources *sourceList) ([]chat.Message, error) {
	var (
		mu      sync.Mutex
		sendErr error
	)
	send := func(e chat.Event) {
		mu.Lock()
		defer mu.Unlock()
		if sendErr == nil {
			sendErr = emit(t.OnEvent, e)
		}
	}
	for _, c := range calls {
		send(chat.Event{Kind: chat.EventToolCall, Call: c})
	}
	out := make([]chat.Message, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			out[i] = a.runCall(ctx, t, scope, tools, c, sources, send)
			send(chat.Event{Kind: chat.EventToolResult, Call: c, OK: out[i].Outcome == chat.OutcomeOK,
				Content: chat.CutText(out[i].Content, EventContentBytes, "…")})
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, sendErr
}

// runCall runs one call: checks, the policy's decision (waiting for a
// person on ask), the tool itself; audited whatever happens.
func (a *Agent) runCall(ctx context.Context, t Turn, scope chat.ToolScope, tools map[string]tool, c chat.ToolCall, sources *sourceList, send func(chat.Event)) chat.Message {
	start := a.d.Clock.Now()
	tl, known := tools[c.Name]
	decision := toolpolicy.Allow
	if known {
		decision = tl.decision
	}
	outcome, content, approved := a.execute(ctx, t, scope, tl, known, c, sources, send)
	done := a.d.Clock.Now()
	content = storable(content)
	msg := chat.Message{
		Role: chat.RoleTool, Content: chat.CutText(content, chat.MaxToolResultBytes, chat.ToolResultCutMarker),
		ToolCallID: c.ID, ToolName: c.Name, Outcome: outcome, Duration: done.Sub(start), Time: done,
	}
	a.audit(ctx, t, tl, known, c, decision, approved, outcome, msg.Duration)
	return msg
}

// execute is runCall's decision and call: the outcome, the text the
// model sees, and the person's decision of an ask call ("" otherwise).
func (a *Agent) execute(ctx context.Context, t Turn, scope chat.ToolScope, tl tool, known bool, c chat.ToolCall, sources *sourceList, send func(chat.Event)) (outcome, content, approved string) {
	if !known {
		return chat.OutcomeInvalid, fmt.Sprintf("Error: there is no tool named %q.", clip(c.Name)), ""
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args == nil {
		return chat.OutcomeInvalid, "Error: the arguments are not a JSON object; call the tool again with valid JSON arguments.", ""
	}
	if tl.decision == toolpolicy.Ask {
		ok, why := a.approve(ctx, t, c, send)
		if !ok {
			return chat.OutcomeDenied, why, DecisionDeny
		}
		approved = DecisionApprove
	}
	ag := t.Cat.Chat.Agent
	callCtx, cancel := context.WithTimeout(ctx, time.Duration(max(ag.ToolTimeoutSeconds, 1))*time.Second)
	defer cancel()
	var (
		out chat.ToolOutput
		err error
	)
	if tl.spec.Server == "" && tl.spec.Name == KnowledgeSearch {
		out, err = a.search(callCtx, t.Cat, args, sources)
	} else {
		out, err = a.d.Toolbox.Call(callCtx, t.Cat, scope, c.Name, []byte(c.Arguments))
	}
	switch {
	case err != nil && callCtx.Err() != nil && ctx.Err() == nil:
		return chat.OutcomeTimeout, fmt.Sprintf("Error: the tool did not answer within %d seconds.", ag.ToolTimeoutSeconds), approved
	case err != nil:
		return chat.OutcomeError, "Error: the tool could not be called: " + errs.PublicMessage(err, "it failed"), approved
	case out.IsError:
		return chat.OutcomeError, out.Content, approved
	}
	return chat.OutcomeOK, out.Content, approved
}

// approve waits for a person's decision on an ask call, or the approval
// time-out (then denied). It returns whether the call may run, and the
// tool result to give the model when not.
func (a *Agent) approve(ctx context.Context, t Turn, c chat.ToolCall, send func(chat.Event)) (bool, string) {
	ag := t.Cat.Chat.Agent
	wait := time.Duration(max(ag.ApprovalTimeoutSeconds, 1)) * time.Second
	id := a.d.NewID()
	now := a.d.Clock.Now()
	p := a.d.Approvals.open(id, t.User, t.Cat.Name, c, now, now.Add(wait))
	defer func() { a.d.Approvals.close(id, a.d.Clock.Now()) }()
	send(chat.Event{Kind: chat.EventApprovalRequired, Call: c, ApprovalID: id, ExpiresAt: now.Add(wait)})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ok := <-p.decision:
		if ok {
			return true, ""
		}
		return false, "The user denied this tool call; it was not made. Do not retry it; answer without it."
	case <-timer.C:
		return false, fmt.Sprintf("No one approved this tool call within %d seconds; it was not made. Answer without it.", ag.ApprovalTimeoutSeconds)
	case <-ctx.Done():
		return false, "The turn ended before the call was approved."
	}
}

// search runs knowledge_search: {"query": "..."}.
func (a *Agent) search(ctx context.Context, cat catconfig.Cat, args map[string]json.RawMessage, sources *sourceList) (chat.ToolOutput, error) {
	// A missing or non-string query is the model's mistake: a result
	// telling it so, not a failed call.
	q, ok := queryOf(args)
	if !ok {
		return chat.ToolOutput{Content: `Error: give {"query": "<what to look for>"}.`, IsError: true}, nil
	}
	hits, err := a.d.Searcher.Search(ctx, cat, q)
	if err != nil {
		return chat.ToolOutput{}, err
	}
	if len(hits) == 0 {
		return chat.ToolOutput{Content: "No matching entries."}, nil
	}
	nums := sources.add(hits)
	type hit struct {
		N       int     `json:"n"`
		Title   string  `json:"title,omitempty"`
		Text    string  `json:"text"`
		Score   float64 `json:"score"`
		ID      string  `json:"id,omitempty"`
		Chunk   string  `json:"chunk_id,omitempty"`
		URL     string  `json:"url,omitempty"`
		Kind    string  `json:"kind"`
		Related string  `json:"question,omitempty"`
	}
	out := make([]hit, len(hits))
	for i, h := range hits {
		out[i] = hit{N: nums[i], Title: h.Title, Text: h.Snippet, Score: h.Score, ID: h.ID, Chunk: h.ChunkID, URL: h.URL, Kind: h.Kind, Related: h.Question}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return chat.ToolOutput{}, err
	}
	return chat.ToolOutput{Content: string(b)}, nil
}

// queryOf is knowledge_search's query, if the arguments give one.
func queryOf(args map[string]json.RawMessage) (string, bool) {
	var q string
	if json.Unmarshal(args["query"], &q) != nil || strings.TrimSpace(q) == "" {
		return "", false
	}
	return q, true
}

// audit records the call (never its arguments). A failing audit log costs
// the line, not the turn.
func (a *Agent) audit(ctx context.Context, t Turn, tl tool, known bool, c chat.ToolCall, decision, approved, outcome string, took time.Duration) {
	if a.d.Audit == nil {
		return
	}
	server, name := "builtin", c.Name
	if known && tl.spec.Server != "" {
		server, name = tl.spec.Server, tl.spec.Tool
	} else if !known {
		server = "unknown"
	}
	if approved == "" {
		approved = "none"
	}
	reason := fmt.Sprintf("tool=%s/%s policy=%s rule=%q decision=%s outcome=%s duration_ms=%d",
		server, clip(name), decision, tl.pattern, approved, outcome, took.Milliseconds())
	e := auth.AuditEvent{Time: a.d.Clock.Now(), Kind: AuditToolCall, UserID: t.User, Provider: server, Cat: t.Cat.Name, Reason: reason}
	_ = a.d.Audit.Record(context.WithoutCancel(ctx), e.Storable())
}

func emit(onEvent func(chat.Event) error, e chat.Event) error {
	if onEvent == nil {
		return nil
	}
	return onEvent(e)
}

func addTokens(sum, n *int) *int {
	switch {
	case n == nil:
		return sum
	case sum == nil:
		v := *n
		return &v
	}
	v := *sum + *n
	return &v
}

// storable makes a tool's text storable: valid UTF-8, no NUL bytes.
func storable(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// sourceList gathers knowledge hits of concurrent calls, each once.
type sourceList struct {
	mu   sync.Mutex
	seen map[string]int
	all  []chat.Source
}

// add keeps the hits not seen before and returns each hit's number in
// the turn's sources (1-based): the [n] the model cites it by.
func (s *sourceList) add(hits []chat.Source) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	nums := make([]int, len(hits))
	for i, h := range hits {
		key := h.Kind + "\x00" + h.ID + "\x00" + h.ChunkID
		n, ok := s.seen[key]
		if !ok {
			s.all = append(s.all, h)
			n = len(s.all)
			s.seen[key] = n
		}
		nums[i] = n
	}
	return nums
}

func (s *sourceList) list() []chat.Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all
}
