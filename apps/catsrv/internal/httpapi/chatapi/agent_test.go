package chatapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/agent"
)

const toolsChat = ChatPath + "/chat?catname=" + ToolsCat

// twoCalls is a model that calls knowledge_search and files__read at
// once, then answers.
func twoCalls(answer string) func(int, openaitest.Request) openaitest.Reply {
	return func(n int, req openaitest.Request) openaitest.Reply {
		last := req.Messages()[len(req.Messages())-1]
		if last["role"] != "tool" {
			return openaitest.Reply{Text: "Let me check.", Usage: 10, Calls: []openaitest.Call{
				{ID: "call_kb", Name: "knowledge_search", Arguments: `{"query":"reset password"}`},
				{ID: "call_file", Name: "files__read", Arguments: `{"path":"/srv/a.txt"}`},
			}}
		}
		return openaitest.Reply{Text: answer, Usage: 7}
	}
}

func addFiles(e *ChatEnv) {
	e.Tools.Add("files", "read", func(_ context.Context, args []byte) (chat.ToolOutput, error) {
		var a struct{ Path string }
		_ = json.Unmarshal(args, &a)
		return chat.ToolOutput{Content: "contents of " + a.Path}, nil
	})
}

// TestAgentTurnWithTools: a turn with two parallel calls answers with the
// final text, the knowledge base's hit as a source and the usage of both
// steps; the conversation shows the calls in OpenAI's shape, the next
// turn sends them back in that shape, and a search by tool name finds it.
func TestAgentTurnWithTools(t *testing.T) {
	e := NewChatEnv(t)
	addFiles(e)
	e.Scripted.Script = twoCalls("Use the reset link.")
	alice := e.Token(t, "alice", "user")
	r := e.Call(t, http.MethodPost, toolsChat, alice, chatMsg("how do I reset my password?"))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
	var resp chatapi.ChatResponse
	r.Decode(t, &resp)
	if resp.Message != "Use the reset link." || resp.TokensUsed == nil || *resp.TokensUsed != 17 {
		t.Fatalf("response %+v", resp)
	}
	if len(resp.Sources) != 1 || resp.Sources[0].ID != "reset-password" {
		t.Errorf("sources %+v, want the KB entry reset-password", resp.Sources)
	}
	d := conversation(e, t, alice, ToolsCat, resp.ConversationID)
	roles := []string{}
	for _, m := range d.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"user", "assistant", "tool", "tool", "assistant"}) {
		t.Fatalf("roles %v", roles)
	}
	asked := d.Messages[1]
	if len(asked.ToolCalls) != 2 || asked.ToolCalls[1].Function.Name != "files__read" || asked.ToolCalls[1].Type != "function" ||
		asked.ToolCalls[1].Function.Arguments != `{"path":"/srv/a.txt"}` || asked.Content != "Let me check." {
		t.Errorf("assistant tool calls %+v", asked)
	}
	file := d.Messages[3]
	if file.ToolCallID != "call_file" || file.Name != "files__read" || file.Content != "contents of /srv/a.txt" ||
		file.Outcome != chat.OutcomeOK || file.DurationMS == nil {
		t.Errorf("tool message %+v", file)
	}
	// The next turn replays the calls as tool_calls and tool messages.
	e.Scripted.Script = openaitest.Steps(openaitest.Reply{Text: "You're welcome."})
	n := len(e.Scripted.Requests())
	r = e.Call(t, http.MethodPost, toolsChat, alice, chatMsg("thanks", inConversation(resp.ConversationID)))
	if r.Status != http.StatusOK {
		t.Fatalf("second turn: %d %s", r.Status, r.Body)
	}
	msgs := e.Scripted.Requests()[n].Messages()
	// system, user, assistant(tool_calls), tool, tool, assistant, user
	if len(msgs) != 7 || msgs[2]["tool_calls"] == nil || msgs[3]["role"] != "tool" || msgs[3]["tool_call_id"] != "call_kb" ||
		msgs[4]["tool_call_id"] != "call_file" || msgs[4]["content"] != "contents of /srv/a.txt" {
		b, _ := json.Marshal(msgs)
		t.Fatalf("replayed messages %s", b)
	}
	if strings.Contains(msgs[5]["content"].(string), "files__read") {
		t.Errorf("a tool call replayed as text: %v", msgs[5])
	}
	r = e.Call(t, http.MethodGet, ChatPath+"/conversations/search?q=files__read&catname="+ToolsCat, alice, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), resp.ConversationID) {
		t.Errorf("search by tool name: %d %s", r.Status, r.Body)
	}
	events, err := e.Auth.Events(t.Context(), auth.AuditFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, ev := range events {
		if ev.Kind == agent.AuditToolCall {
			calls++
			if ev.Cat != ToolsCat || strings.Contains(ev.Reason, "/srv/a.txt") || !strings.Contains(ev.Reason, "outcome=ok") {
				t.Errorf("audit event %+v", ev)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d tool calls audited, want 2", calls)
	}
}

// streamEvents posts a streamed chat and calls on for each event as it
// arrives; it returns every event.
func streamEvents(t *testing.T, e *ChatEnv, target, token string, body map[string]any, on func(Event)) []Event {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.Srv.URL+target, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	res, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	var out []Event
	var cur Event
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				out = append(out, cur)
				if on != nil {
					on(cur)
				}
			}
			cur = Event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
	return out
}

func names(events []Event) []string {
	var out []string
	for _, e := range events {
		if len(out) == 0 || out[len(out)-1] != e.Name || e.Name != "delta" {
			out = append(out, e.Name)
		}
	}
	return out
}

// TestAgentStreamShowsTheWork: a streamed turn reports both calls, both
// results (cut to 2 KiB), then the answer's deltas and done.
func TestAgentStreamShowsTheWork(t *testing.T) {
	e := NewChatEnv(t)
	e.Tools.Add("files", "read", func(context.Context, []byte) (chat.ToolOutput, error) {
		return chat.ToolOutput{Content: strings.Repeat("a", 40<<10)}, nil
	})
	e.Scripted.Script = twoCalls("The answer.")
	alice := e.Token(t, "alice", "user")
	events := streamEvents(t, e, toolsChat, alice, chatMsg("reset password?", streamed), nil)
	got := names(events)
	want := []string{"delta", "tool_call", "tool_call", "tool_result", "tool_result", "delta", "done"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var call chatapi.ToolCallEvent
	_ = json.Unmarshal(events[slicesIndex(events, "tool_call")+1].Data, &call)
	if call.ID != "call_file" || call.Name != "files__read" || call.Arguments != `{"path":"/srv/a.txt"}` {
		t.Errorf("tool_call %+v", call)
	}
	for _, ev := range events {
		if ev.Name != "tool_result" {
			continue
		}
		var res chatapi.ToolResultEvent
		_ = json.Unmarshal(ev.Data, &res)
		if !res.OK || len(res.Content) > 2<<10 {
			t.Errorf("tool_result %s: ok %v, %d bytes", res.ID, res.OK, len(res.Content))
		}
	}
	var done chatapi.ChatResponse
	_ = json.Unmarshal(events[len(events)-1].Data, &done)
	d := conversation(e, t, alice, ToolsCat, done.ConversationID)
	if n := len(d.Messages[3].Content); n > chat.MaxToolResultBytes || !strings.HasSuffix(d.Messages[3].Content, chat.ToolResultCutMarker) {
		t.Errorf("stored result: %d bytes", n)
	}
}

func slicesIndex(events []Event, name string) int {
	for i, e := range events {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// deleteCall is a model that asks to delete a CRM user (policy: ask),
// then answers with the tool's result.
func deleteCall(n int, req openaitest.Request) openaitest.Reply {
	msgs := req.Messages()
	last := msgs[len(msgs)-1]
	if last["role"] == "tool" {
		return openaitest.Reply{Text: "Result: " + last["content"].(string)}
	}
	return openaitest.Reply{Calls: []openaitest.Call{{ID: "del", Name: "crm__delete_user", Arguments: `{"id":7}`}}}
}

// TestApprovals: an ask call waits for the turn's user or an admin;
// someone else's decision is 404, a second 409; deny and the time-out
// give the model a refusal.
func TestApprovals(t *testing.T) {
	for _, c := range []struct {
		name, decider, decision, want string
	}{
		{"user approves", "alice", agent.DecisionApprove, "Result: deleted 7"},
		{"admin approves", "root", agent.DecisionApprove, "Result: deleted 7"},
		{"user denies", "alice", agent.DecisionDeny, "Result: The user denied"},
		{"nobody decides", "", "", "Result: No one approved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := NewChatEnv(t)
			e.Tools.Add("crm", "delete_user", func(context.Context, []byte) (chat.ToolOutput, error) {
				return chat.ToolOutput{Content: "deleted 7"}, nil
			})
			e.Scripted.Script = deleteCall
			tokens := map[string]string{"alice": e.Token(t, "alice", "user"), "bob": e.Token(t, "bob", "user"), "root": e.Token(t, "root", auth.RoleAdmin)}
			if c.decider == "" { // wait one second for nobody, not ToolsCat's ten
				if r := e.Call(t, http.MethodPost, ChatPath+"/config/sync?catname="+ToolsCat, tokens["root"],
					map[string]any{"agent": map[string]any{"approval_timeout_seconds": 1}}); r.Status != http.StatusOK {
					t.Fatalf("sync: %d %s", r.Status, r.Body)
				}
			}
			decide := func(who, id, decision string) int {
				return e.Call(t, http.MethodPost, ChatPath+"/approvals/"+id+"?catname="+ToolsCat, tokens[who], map[string]string{"decision": decision}).Status
			}
			events := streamEvents(t, e, toolsChat, tokens["alice"], chatMsg("delete user 7", streamed), func(ev Event) {
				if ev.Name != "approval_required" {
					return
				}
				var a chatapi.ApprovalRequiredEvent
				_ = json.Unmarshal(ev.Data, &a)
				if a.Name != "crm__delete_user" || a.Arguments != `{"id":7}` || a.ExpiresAt.IsZero() {
					t.Errorf("approval_required %+v", a)
				}
				r := e.Call(t, http.MethodGet, ChatPath+"/approvals?catname="+ToolsCat, tokens["alice"], nil)
				if !strings.Contains(string(r.Body), a.ApprovalID) {
					t.Errorf("pending approvals %s", r.Body)
				}
				if c.decider == "" {
					return
				}
				if s := decide("bob", a.ApprovalID, c.decision); s != http.StatusNotFound {
					t.Errorf("bob decides alice's: %d, want 404", s)
				}
				if s := decide(c.decider, a.ApprovalID, c.decision); s != http.StatusNoContent {
					t.Errorf("decision: %d, want 204", s)
				}
				if s := decide(c.decider, a.ApprovalID, c.decision); s != http.StatusConflict {
					t.Errorf("second decision: %d, want 409", s)
				}
			})
			var done chatapi.ChatResponse
			if last := events[len(events)-1]; last.Name != "done" || json.Unmarshal(last.Data, &done) != nil || !strings.HasPrefix(done.Message, c.want) {
				t.Fatalf("last event %s %s, want a reply starting %q", last.Name, last.Data, c.want)
			}
			if s := decide("alice", "no-such-id", agent.DecisionApprove); s != http.StatusNotFound {
				t.Errorf("unknown id: %d", s)
			}
		})
	}
}

// TestApprovalOfAPlainTurn: a turn that is not streamed waits too; its
// pending approval is listed and decided while the request is open.
func TestApprovalOfAPlainTurn(t *testing.T) {
	e := NewChatEnv(t)
	e.Tools.Add("crm", "delete_user", func(context.Context, []byte) (chat.ToolOutput, error) {
		return chat.ToolOutput{Content: "deleted 7"}, nil
	})
	e.Scripted.Script = deleteCall
	alice := e.Token(t, "alice", "user")
	var wg sync.WaitGroup
	var r Resp
	wg.Go(func() { r = e.Call(t, http.MethodPost, toolsChat, alice, chatMsg("delete user 7")) })
	var list chatapi.PendingApprovals
	WaitFor(t, func() bool {
		e.Call(t, http.MethodGet, ChatPath+"/approvals?catname="+ToolsCat, alice, nil).Decode(t, &list)
		return len(list.Approvals) == 1
	})
	if s := e.Call(t, http.MethodPost, ChatPath+"/approvals/"+list.Approvals[0].ApprovalID+"?catname="+ToolsCat, alice,
		map[string]string{"decision": "approve"}).Status; s != http.StatusNoContent {
		t.Fatalf("decision %d", s)
	}
	wg.Wait()
	var resp chatapi.ChatResponse
	r.Decode(t, &resp)
	if resp.Message != "Result: deleted 7" {
		t.Fatalf("reply %+v", resp)
	}
}

// TestDeniedToolIsNotOffered: the policy's deny hides a tool.
func TestDeniedToolIsNotOffered(t *testing.T) {
	e := NewChatEnv(t)
	addFiles(e)
	e.Tools.Add("crm", "secret_dump", func(context.Context, []byte) (chat.ToolOutput, error) { return chat.ToolOutput{}, nil })
	alice := e.Token(t, "alice", "user")
	if r := e.Call(t, http.MethodPost, toolsChat, alice, chatMsg("hi")); r.Status != http.StatusOK {
		t.Fatalf("status %d", r.Status)
	}
	if got := e.Scripted.Requests()[0].ToolNames(); !reflect.DeepEqual(got, []string{"knowledge_search", "files__read"}) {
		t.Errorf("tools offered %v", got)
	}
}

// TestHostileModel: a model that sends too much, never stops, cuts its
// stream or answers a stream with JSON is a 502 (an error event once the
// stream began), logged WARN; the user's message, and the part a stream
// sent, are stored.
func TestHostileModel(t *testing.T) {
	cases := []struct {
		name    string
		reply   openaitest.Reply
		stream  bool
		message string
	}{
		{"huge reply", openaitest.Reply{Hostile: openaitest.Huge, HugeBytes: 200 << 20}, false, "the model's reply is longer than 65536 bytes"},
		{"huge stream", openaitest.Reply{Hostile: openaitest.Huge, HugeBytes: 8 << 20}, true, "the model's reply is longer than 65536 bytes"},
		{"endless stream", openaitest.Reply{Hostile: openaitest.Endless}, true, "the model's reply is longer than 65536 bytes"},
		{"truncated stream", openaitest.Reply{Hostile: openaitest.Truncated}, true, "the model's stream ended before the reply was finished"},
		{"not an event stream", openaitest.Reply{Hostile: openaitest.NotSSE}, true, "the model service did not answer with an event stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewChatEnv(t)
			e.Scripted.Script = openaitest.Steps(c.reply)
			// A slow machine must not turn a reply too large into a time-out.
			root := e.Token(t, "root", auth.RoleAdmin)
			if r := e.Call(t, http.MethodPost, ChatPath+"/config/sync?catname="+ToolsCat, root,
				map[string]any{"agent": map[string]any{"timeout_seconds": 300}}); r.Status != http.StatusOK {
				t.Fatalf("sync: %d %s", r.Status, r.Body)
			}
			alice := e.Token(t, "alice", "user")
			body := chatMsg("tell me everything")
			var sent strings.Builder
			if c.stream {
				body["stream"] = true
			}
			r := e.Call(t, http.MethodPost, toolsChat, alice, body)
			var errBody struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
			}
			if r.Header.Get("Content-Type") == "text/event-stream" {
				events := Events(t, r.Body)
				for _, ev := range events[:len(events)-1] {
					var d chatapi.DeltaEvent
					_ = json.Unmarshal(ev.Data, &d)
					sent.WriteString(d.Text)
				}
				last := events[len(events)-1]
				if last.Name != "error" {
					t.Fatalf("last event %s", last.Name)
				}
				_ = json.Unmarshal(last.Data, &errBody)
			} else {
				_ = json.Unmarshal(r.Body, &errBody)
				errBody.Status = r.Status
			}
			if errBody.Status != http.StatusBadGateway || errBody.Message != c.message {
				t.Fatalf("answer %d %q (%.200s), want 502 %q", errBody.Status, errBody.Message, r.Body, c.message)
			}
			if len(e.Logs.Lines(t, "model service failed")) != 1 {
				t.Errorf("no WARN line: %s", e.Logs.String())
			}
			var list chatapi.ConversationList
			e.Call(t, http.MethodGet, ChatPath+"/conversations?catname="+ToolsCat, alice, nil).Decode(t, &list)
			if len(list.Conversations) != 1 {
				t.Fatalf("%d conversations stored", len(list.Conversations))
			}
			d := conversation(e, t, alice, ToolsCat, list.Conversations[0].ID)
			if d.Messages[0].Content != "tell me everything" {
				t.Errorf("user message %q", d.Messages[0].Content)
			}
			stored := ""
			if len(d.Messages) > 1 {
				stored = d.Messages[1].Content
			}
			if stored != sent.String() || len(stored) > 64<<10 {
				t.Errorf("stored %d bytes, sent %d: want what was sent", len(stored), sent.Len())
			}
		})
	}
}

// TestSyncChangesToolsNotServers: POST /config/sync may change the
// policy, max_steps and the time-outs, never mcp_servers.
func TestSyncChangesToolsNotServers(t *testing.T) {
	e := NewChatEnv(t)
	root := e.Token(t, "root", auth.RoleAdmin)
	sync := ChatPath + "/config/sync?catname=" + ToolsCat
	r := e.Call(t, http.MethodPost, sync, root, map[string]any{"agent": map[string]any{
		"tools": []string{"* => deny"}, "max_steps": 2, "tool_timeout_seconds": 5, "approval_timeout_seconds": 60}})
	if r.Status != http.StatusOK {
		t.Fatalf("sync: %d %s", r.Status, r.Body)
	}
	var cfg chatapi.ConfigResponse
	r.Decode(t, &cfg)
	a := cfg.Cat.Agent
	if a.MaxSteps != 2 || a.ToolTimeoutSeconds != 5 || a.ApprovalTimeoutSeconds != 60 || !reflect.DeepEqual(a.Tools, []string{"* => deny"}) || len(a.MCPServers) != 2 {
		t.Fatalf("agent after sync %+v", a)
	}
	for _, bad := range []map[string]any{
		{"agent": map[string]any{"mcp_servers": []any{map[string]any{"name": "evil", "command": []string{"sh"}}}}},
		{"agent": map[string]any{"max_steps": 51}},
		{"agent": map[string]any{"tool_timeout_seconds": 0}},
		{"agent": map[string]any{"tools": []string{"files/* => maybe"}}},
	} {
		if r := e.Call(t, http.MethodPost, sync, root, bad); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("sync %v: %d %s, want 422", bad, r.Status, r.Body)
		}
	}
	// The denied tools are gone from the next turn.
	addFiles(e)
	if r := e.Call(t, http.MethodPost, toolsChat, e.Token(t, "alice", "user"), chatMsg("hi")); r.Status != http.StatusOK {
		t.Fatalf("chat %d", r.Status)
	}
	if got := e.Scripted.Requests()[0].ToolNames(); len(got) != 0 {
		t.Errorf("tools offered after * => deny: %v", got)
	}
}
