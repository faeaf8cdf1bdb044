package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/agent"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

// scriptModel answers the n-th call with script(n, req); it records the
// requests. Streamed calls deliver the text as one delta.
type scriptModel struct {
	mu     sync.Mutex
	reqs   []chat.ModelRequest
	script func(n int, req chat.ModelRequest) (chat.Completion, error)
}

func (m *scriptModel) Complete(_ context.Context, req chat.ModelRequest) (chat.Completion, error) {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.script(n, req)
}

func (m *scriptModel) Stream(ctx context.Context, req chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
	c, err := m.Complete(ctx, req)
	if err == nil && c.Text != "" {
		err = onDelta(c.Text)
	}
	return c, err
}

func (m *scriptModel) requests() []chat.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// toolbox is an in-memory Toolbox: tools by name, each a function.
type toolbox struct {
	specs []chat.ToolSpec
	run   map[string]func(ctx context.Context, args []byte) (chat.ToolOutput, error)
}

func (b *toolbox) Tools(context.Context, catconfig.Cat, chat.ToolScope) ([]chat.ToolSpec, error) {
	return b.specs, nil
}

func (b *toolbox) Call(ctx context.Context, _ catconfig.Cat, _ chat.ToolScope, name string, args []byte) (chat.ToolOutput, error) {
	f, ok := b.run[name]
	if !ok {
		return chat.ToolOutput{}, errs.New(errs.KindNotFound, "no tool %s", name)
	}
	return f(ctx, args)
}

func (b *toolbox) add(server, name string, f func(ctx context.Context, args []byte) (chat.ToolOutput, error)) {
	full := server + "__" + name
	b.specs = append(b.specs, chat.ToolSpec{Name: full, Server: server, Tool: name, Parameters: []byte(`{"type":"object"}`)})
	if b.run == nil {
		b.run = map[string]func(context.Context, []byte) (chat.ToolOutput, error){}
	}
	b.run[full] = f
}

type kb struct{ hits []chat.Source }

func (k kb) Search(_ context.Context, _ catconfig.Cat, q string) ([]chat.Source, error) {
	if q == "fail" {
		return nil, errors.New("index down")
	}
	return k.hits, nil
}

type fixture struct {
	model *scriptModel
	box   *toolbox
	audit *mocks.AuditLogMock
	ag    *agent.Agent
	cat   catconfig.Cat
	ids   int
}

func newFixture(t *testing.T, script func(n int, req chat.ModelRequest) (chat.Completion, error)) *fixture {
	t.Helper()
	f := &fixture{model: &scriptModel{script: script}, box: &toolbox{}, cat: catconfig.Defaults("demo")}
	f.cat.Chat.Agent.MCPServers = []catconfig.MCPServer{{Name: "files", Command: []string{"x"}}, {Name: "crm", URL: "http://crm"}}
	f.cat.Chat.Agent.ToolTimeoutSeconds = 1
	f.cat.Chat.Agent.ApprovalTimeoutSeconds = 1
	var mu sync.Mutex
	f.audit = &mocks.AuditLogMock{RecordFunc: func(context.Context, auth.AuditEvent) error { return nil }}
	f.ag = agent.New(agent.Deps{
		Model: f.model, Toolbox: f.box, Searcher: kb{hits: []chat.Source{{Kind: chat.SourceKB, ID: "refunds", Question: "How do refunds work?", Snippet: "Within 14 days."}}},
		Audit: f.audit, Clock: &mocks.ClockMock{NowFunc: time.Now},
		NewID: func() string { mu.Lock(); defer mu.Unlock(); f.ids++; return fmt.Sprintf("id%d", f.ids) },
	})
	return f
}

func (f *fixture) run(t *testing.T, onEvent func(chat.Event) error) (agent.Result, error) {
	t.Helper()
	return f.ag.Run(t.Context(), agent.Turn{Cat: f.cat, User: "alice", OnEvent: onEvent,
		Request: chat.ModelRequest{Model: "m", Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}})
}

func tokens(n int) *int { return &n }

// TestParallelCallsRunConcurrently: two calls of one reply run at the
// same time (each waits for the other to start), their results come back
// in the calls' order, and usage is summed over the steps.
func TestParallelCallsRunConcurrently(t *testing.T) {
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		if n == 0 {
			return chat.Completion{TokensUsed: tokens(10), InputTokens: 7, OutputTokens: 3, FinishReason: "tool_calls", ToolCalls: []chat.ToolCall{
				{ID: "a", Name: "files__read", Arguments: `{"p":"a"}`}, {ID: "b", Name: "files__read", Arguments: `{"p":"b"}`},
			}}, nil
		}
		return chat.Completion{Text: "done", TokensUsed: tokens(5), InputTokens: 4, OutputTokens: 1, FinishReason: "stop"}, nil
	})
	var started sync.WaitGroup
	started.Add(2)
	f.box.add("files", "read", func(ctx context.Context, args []byte) (chat.ToolOutput, error) {
		started.Done()
		started.Wait() // both calls must be running at once to get here
		var a struct{ P string }
		_ = json.Unmarshal(args, &a)
		return chat.ToolOutput{Content: "content of " + a.P}, nil
	})
	var events []chat.Event
	res, err := f.run(t, func(e chat.Event) error { events = append(events, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || res.TokensUsed == nil || *res.TokensUsed != 15 || res.Steps != 2 ||
		res.InputTokens != 11 || res.OutputTokens != 4 || res.FinishReason != "stop" {
		t.Fatalf("result %+v", res)
	}
	if len(res.Messages) != 3 || res.Messages[0].Role != chat.RoleAssistant || len(res.Messages[0].ToolCalls) != 2 {
		t.Fatalf("messages %+v", res.Messages)
	}
	for i, id := range []string{"a", "b"} {
		m := res.Messages[i+1]
		if m.Role != chat.RoleTool || m.ToolCallID != id || m.Content != "content of "+id || m.Outcome != chat.OutcomeOK {
			t.Errorf("result %d = %+v", i, m)
		}
	}
	// The second call sees the first's calls and results in order.
	second := f.model.requests()[1].Messages
	if got := len(second); got != 4 || second[1].Role != chat.RoleAssistant || second[2].ToolCallID != "a" || second[3].ToolCallID != "b" {
		t.Fatalf("second request messages %+v", second)
	}
	kinds := []string{}
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds[:2], []string{chat.EventToolCall, chat.EventToolCall}) || kinds[len(kinds)-1] != chat.EventDelta ||
		slices.Index(kinds, chat.EventToolResult) < 0 {
		t.Errorf("events %v", kinds)
	}
}

// TestFailuresAreResults: bad JSON, an unknown tool, a failing tool, a
// tool reporting an error and a slow tool each become a result the model
// sees; the turn answers.
func TestFailuresAreResults(t *testing.T) {
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		if n == 0 {
			return chat.Completion{ToolCalls: []chat.ToolCall{
				{ID: "json", Name: "files__read", Arguments: `{"p":`},
				{ID: "unknown", Name: "nope__x", Arguments: `{}`},
				{ID: "fails", Name: "files__broken", Arguments: `{}`},
				{ID: "iserr", Name: "files__iserr", Arguments: `{}`},
				{ID: "slow", Name: "files__slow", Arguments: `{}`},
				{ID: "big", Name: "files__big", Arguments: `{}`},
			}}, nil
		}
		return chat.Completion{Text: "sorry"}, nil
	})
	f.box.add("files", "read", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{Content: "x"}, nil })
	f.box.add("files", "broken", func(context.Context, []byte) (chat.ToolOutput, error) {
		return chat.ToolOutput{}, errs.New(errs.KindUnavailable, "server files is down")
	})
	f.box.add("files", "iserr", func(context.Context, []byte) (chat.ToolOutput, error) {
		return chat.ToolOutput{Content: "no such file", IsError: true}, nil
	})
	f.box.add("files", "slow", func(ctx context.Context, _ []byte) (chat.ToolOutput, error) {
		<-ctx.Done()
		return chat.ToolOutput{}, ctx.Err()
	})
	f.box.add("files", "big", func(context.Context, []byte) (chat.ToolOutput, error) {
		return chat.ToolOutput{Content: strings.Repeat("é", 40<<10) + "\x00"}, nil
	})
	res, err := f.run(t, nil)
	if err != nil || res.Text != "sorry" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	want := map[string]string{"json": chat.OutcomeInvalid, "unknown": chat.OutcomeInvalid, "fails": chat.OutcomeError,
		"iserr": chat.OutcomeError, "slow": chat.OutcomeTimeout, "big": chat.OutcomeOK}
	for _, m := range res.Messages[1:] {
		if m.Outcome != want[m.ToolCallID] || m.Content == "" {
			t.Errorf("%s: outcome %s content %.60q, want %s", m.ToolCallID, m.Outcome, m.Content, want[m.ToolCallID])
		}
		if m.ToolCallID == "big" && (len(m.Content) > chat.MaxToolResultBytes || !strings.HasSuffix(m.Content, chat.ToolResultCutMarker)) {
			t.Errorf("big result: %d bytes, ends %q", len(m.Content), m.Content[len(m.Content)-40:])
		}
		if m.ToolCallID == "fails" && !strings.Contains(m.Content, "server files is down") {
			t.Errorf("failure text %q", m.Content)
		}
	}
	if n := len(f.audit.RecordCalls()); n != 6 {
		t.Errorf("%d audit events, want 6", n)
	}
	for _, c := range f.audit.RecordCalls() {
		if strings.Contains(c.E.Reason, `"p"`) || c.E.Kind != agent.AuditToolCall || c.E.UserID != "alice" || c.E.Cat != "demo" {
			t.Errorf("audit event %+v", c.E)
		}
	}
}

// TestMaxSteps: a model that never stops calling tools gets max_steps
// calls, the last without tools and told to answer; the user gets that
// answer, not an error.
func TestMaxSteps(t *testing.T) {
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		if len(req.Tools) == 0 {
			return chat.Completion{Text: "final answer"}, nil
		}
		return chat.Completion{ToolCalls: []chat.ToolCall{{ID: fmt.Sprint("c", n), Name: "files__read", Arguments: `{}`}}}, nil
	})
	f.cat.Chat.Agent.MaxSteps = 3
	f.box.add("files", "read", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{Content: "x"}, nil })
	res, err := f.run(t, nil)
	if err != nil || res.Text != "final answer" || res.Steps != 3 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := f.model.requests()
	last := reqs[len(reqs)-1]
	if len(reqs) != 3 || len(last.Tools) != 0 || last.Messages[len(last.Messages)-1].Role != chat.RoleSystem {
		t.Fatalf("%d requests, last with %d tools, last message %+v", len(reqs), len(last.Tools), last.Messages[len(last.Messages)-1])
	}
	// A hostile model that calls tools even without any: still an answer.
	f2 := newFixture(t, func(int, chat.ModelRequest) (chat.Completion, error) {
		return chat.Completion{ToolCalls: []chat.ToolCall{{ID: "x", Name: "files__read", Arguments: `{}`}}}, nil
	})
	f2.cat.Chat.Agent.MaxSteps = 2
	f2.box.add("files", "read", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{Content: "x"}, nil })
	if res, err := f2.run(t, nil); err != nil || res.Text == "" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// TestPolicy: deny is not offered, ask waits for a decision (approve runs
// the call, deny and the time-out do not), no match allows.
func TestPolicy(t *testing.T) {
	for _, c := range []struct {
		name, decision string
		wantOutcome    string
		wantRan        bool
	}{
		{"approve", agent.DecisionApprove, chat.OutcomeOK, true},
		{"deny", agent.DecisionDeny, chat.OutcomeDenied, false},
		{"timeout", "", chat.OutcomeDenied, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
				if n == 0 {
					return chat.Completion{ToolCalls: []chat.ToolCall{{ID: "del", Name: "crm__delete_user", Arguments: `{"id":7}`}}}, nil
				}
				return chat.Completion{Text: "ok"}, nil
			})
			f.cat.Chat.Agent.Tools = []string{"crm/delete_* => ask", "files/* => allow", "crm/* => deny"}
			ran := false
			f.box.add("crm", "delete_user", func(context.Context, []byte) (chat.ToolOutput, error) {
				ran = true
				return chat.ToolOutput{Content: "deleted"}, nil
			})
			f.box.add("crm", "list", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{}, nil })
			f.box.add("files", "read", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{}, nil })
			res, err := f.run(t, func(e chat.Event) error {
				if e.Kind != chat.EventApprovalRequired || c.decision == "" {
					return nil
				}
				if e.Call.Name != "crm__delete_user" || e.ExpiresAt.IsZero() {
					t.Errorf("approval event %+v", e)
				}
				if err := f.ag.Approvals().Decide(e.ApprovalID, "bob", "demo", false, c.decision, time.Now()); errs.KindOf(err) != errs.KindNotFound {
					t.Errorf("someone else's decision: %v, want not found", err)
				}
				if err := f.ag.Approvals().Decide(e.ApprovalID, "alice", "demo", false, c.decision, time.Now()); err != nil {
					t.Errorf("Decide: %v", err)
				}
				if err := f.ag.Approvals().Decide(e.ApprovalID, "alice", "demo", false, c.decision, time.Now()); errs.KindOf(err) != errs.KindConflict {
					t.Errorf("second decision: %v, want conflict", err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			offered := []string{}
			for _, s := range f.model.requests()[0].Tools {
				offered = append(offered, s.Name)
			}
			if !reflect.DeepEqual(offered, []string{"knowledge_search", "crm__delete_user", "files__read"}) {
				t.Errorf("offered %v: crm__list is denied", offered)
			}
			if m := res.Messages[1]; m.Outcome != c.wantOutcome || ran != c.wantRan {
				t.Errorf("outcome %s (%q), ran %v", m.Outcome, m.Content, ran)
			}
			if f.ag.Approvals().Pending() != 0 {
				t.Error("an approval is still pending after the turn")
			}
			reason := f.audit.RecordCalls()[0].E.Reason
			if !strings.Contains(reason, "tool=crm/delete_user") || !strings.Contains(reason, "policy=ask") || strings.Contains(reason, `"id"`) {
				t.Errorf("audit reason %q", reason)
			}
		})
	}
}

// TestKnowledgeSearchGivesSources: knowledge_search hits become the
// reply's sources; a failing search is a result, not a failed turn.
func TestKnowledgeSearchGivesSources(t *testing.T) {
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		if n == 0 {
			return chat.Completion{ToolCalls: []chat.ToolCall{
				{ID: "k", Name: agent.KnowledgeSearch, Arguments: `{"query":"refund"}`},
				{ID: "f", Name: agent.KnowledgeSearch, Arguments: `{"query":"fail"}`},
			}}, nil
		}
		return chat.Completion{Text: "Within 14 days."}, nil
	})
	res, err := f.run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 1 || res.Sources[0].ID != "refunds" || !strings.Contains(res.Messages[1].Content, "Within 14 days") {
		t.Fatalf("sources %+v, result %q", res.Sources, res.Messages[1].Content)
	}
	if res.Messages[2].Outcome != chat.OutcomeError {
		t.Errorf("failed search: %+v", res.Messages[2])
	}
}

// TestModelFailureKeepsSteps: a model failing after a tool step returns
// the step's messages with the error.
func TestModelFailureKeepsSteps(t *testing.T) {
	boom := errs.Wrap(errs.KindUnavailable, chat.ErrUpstreamFailed, "the model service failed")
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		if n == 0 {
			return chat.Completion{ToolCalls: []chat.ToolCall{{ID: "k", Name: agent.KnowledgeSearch, Arguments: `{"query":"x"}`}}}, nil
		}
		return chat.Completion{Text: "part"}, boom
	})
	res, err := f.run(t, nil)
	if !errors.Is(err, chat.ErrUpstreamFailed) || len(res.Messages) != 2 || res.Text != "part" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// TestCitationsNameSuppliedSources: knowledge_search numbers each passage
// ("n"), the numbers go on across searches of one turn (a passage found
// twice keeps its number), and the answer keeps only the [n] markers of
// passages supplied.
func TestCitationsNameSuppliedSources(t *testing.T) {
	var results []string
	f := newFixture(t, func(n int, req chat.ModelRequest) (chat.Completion, error) {
		switch n {
		case 0:
			return chat.Completion{ToolCalls: []chat.ToolCall{{ID: "a", Name: agent.KnowledgeSearch, Arguments: `{"query":"refund"}`}}}, nil
		case 1:
			results = append(results, req.Messages[len(req.Messages)-1].Content)
			return chat.Completion{ToolCalls: []chat.ToolCall{{ID: "b", Name: agent.KnowledgeSearch, Arguments: `{"query":"refund again"}`}}}, nil
		}
		results = append(results, req.Messages[len(req.Messages)-1].Content)
		return chat.Completion{Text: "Within 14 days [1], as the manual says [2][1, 3]."}, nil
	})
	res, err := f.run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		var hits []struct{ N int }
		if err := json.Unmarshal([]byte(r), &hits); err != nil || len(hits) != 1 || hits[0].N != 1 {
			t.Errorf("search result %q: want the one passage numbered 1", r)
		}
	}
	if len(res.Sources) != 1 {
		t.Fatalf("sources %+v", res.Sources)
	}
	if want := "Within 14 days [1], as the manual says[1]."; res.Text != want {
		t.Errorf("answer %q, want %q", res.Text, want)
	}
}

// TestSearchersJoinHits: Searchers gives every searcher's hits in order,
// and fails when one fails.
func TestSearchersJoinHits(t *testing.T) {
	a := kb{hits: []chat.Source{{Kind: chat.SourceKB, ID: "e1"}}}
	b := kb{hits: []chat.Source{{Kind: chat.SourceDocument, ID: "d1", ChunkID: "c1"}, {Kind: chat.SourceDocument, ID: "d1", ChunkID: "c2"}}}
	got, err := agent.Searchers{a, b}.Search(t.Context(), catconfig.Defaults("demo"), "q")
	if err != nil || len(got) != 3 || got[0].ID != "e1" || got[2].ChunkID != "c2" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := (agent.Searchers{a, b}).Search(t.Context(), catconfig.Defaults("demo"), "fail"); err == nil {
		t.Error("a failing searcher: no error")
	}
}
