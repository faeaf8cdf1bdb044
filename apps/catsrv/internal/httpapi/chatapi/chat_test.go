package chatapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

// chatMsg is a chat request body.
func chatMsg(message string, extra ...func(map[string]any)) map[string]any {
	b := map[string]any{"message": message}
	for _, f := range extra {
		f(b)
	}
	return b
}

func inConversation(id string) func(map[string]any) {
	return func(b map[string]any) { b["conversation_id"] = id }
}

func streamed(b map[string]any) { b["stream"] = true }

// conversation reads a conversation through the API.
func conversation(e *ChatEnv, t *testing.T, auth, cat, id string) chatapi.ConversationDetail {
	t.Helper()
	r := e.Call(t, http.MethodGet, ChatPath+"/conversations/"+id+"?catname="+cat, auth, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get conversation: status %d %s", r.Status, r.Body)
	}
	var d chatapi.ConversationDetail
	r.Decode(t, &d)
	return d
}

func TestEachModeAnswersAndStores(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	tests := []struct {
		name, path, cat, message string
		model, Reply, source     string
		extra                    []func(map[string]any)
	}{
		{name: "legacy greeting", path: "/chat", cat: LegacyCat, message: "hi there", model: "greeting"},
		{name: "legacy qa", path: "/chat", cat: LegacyCat, message: "how do I reset my password", model: "qa",
			Reply: "Use the forgot password link on the sign-in page.", source: "reset-password"},
		{name: "legacy default", path: "/chat", cat: LegacyCat, message: "what is the moon made of", model: "default", Reply: "Sorry, I do not know the answer to that yet."},
		{name: "agent", path: "/chat", cat: AgentCat, message: "tell me a story", model: "m-test", Reply: "Hello there"},
		{name: "agent model override", path: "/chat", cat: AgentCat, message: "tell me a story", model: "m-other", Reply: "Hello there",
			extra: []func(map[string]any){func(b map[string]any) { b["model"] = "m-other" }}},
		{name: "custom to agent", path: "/chat", cat: CustomCat, message: "I want a refund", model: "m-test", Reply: "Hello there"},
		{name: "custom by context", path: "/chat", cat: CustomCat, message: "reset my password", model: "qa", source: "reset-password",
			extra: []func(map[string]any){func(b map[string]any) { b["context"] = map[string]any{"channel": "faq"} }}},
		{name: "custom default route", path: "/chat", cat: CustomCat, message: "good morning", model: "greeting"},
		{name: "legacy_chat ignores the mode", path: "/legacy_chat", cat: AgentCat, message: "hello", model: "greeting"},
		{name: "agent_chat ignores the mode", path: "/agent_chat", cat: LegacyCat, message: "hello", model: "m-test", Reply: "Hello there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(t, http.MethodPost, ChatPath+tt.path+"?catname="+tt.cat, alice, chatMsg(tt.message, tt.extra...))
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d (%s): %s", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			var got chatapi.ChatResponse
			r.Decode(t, &got)
			if got.Model != tt.model || got.Message == "" || (tt.Reply != "" && got.Message != tt.Reply) || got.ConversationID == "" {
				t.Fatalf("reply = %+v, want model %s reply %q", got, tt.model, tt.Reply)
			}
			if tt.source != "" && (len(got.Sources) == 0 || got.Sources[0].ID != tt.source) {
				t.Errorf("sources = %+v, want %s first", got.Sources, tt.source)
			}
			if got.Model == "m-test" && (got.TokensUsed == nil || *got.TokensUsed != 5) {
				t.Errorf("tokens_used = %v, want 5", got.TokensUsed)
			}
			d := conversation(e, t, alice, tt.cat, got.ConversationID)
			if len(d.Messages) != 2 || d.Messages[0].Content != tt.message || d.Messages[1].Content != got.Message || d.Messages[1].Model != got.Model {
				t.Errorf("stored messages = %+v", d.Messages)
			}
		})
	}
	t.Run("agent sees instructions and history", func(t *testing.T) {
		first := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("first question"))
		var r1 chatapi.ChatResponse
		first.Decode(t, &r1)
		e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("second question", inConversation(r1.ConversationID)))
		msgs, _ := e.Model.Last()["messages"].([]any)
		var roles, contents []string
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			role, _ := mm["role"].(string)
			content, _ := mm["content"].(string)
			roles, contents = append(roles, role), append(contents, content)
		}
		if strings.Join(roles, ",") != "system,user,assistant,user" || strings.Join(contents, "|") != "Be brief.|first question|Hello there|second question" {
			t.Errorf("upstream messages = %v %v", roles, contents)
		}
	})
	t.Run("default CAT", func(t *testing.T) {
		r := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, chatMsg("hi"))
		var got chatapi.ChatResponse
		r.Decode(t, &got)
		if r.Status != http.StatusOK || got.Model != "greeting" {
			t.Fatalf("status %d %s", r.Status, r.Body)
		}
		conversation(e, t, alice, LegacyCat, got.ConversationID)
	})
}

func TestStreamingSendsDeltasThenDone(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	tests := []struct {
		name, cat string
		deltas    []string
		model     string
	}{
		{"legacy is one delta", LegacyCat, []string{"Use the forgot password link on the sign-in page."}, "qa"},
		{"agent streams the model's chunks", AgentCat, []string{"Hel", "lo", " there"}, "m-test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+tt.cat, alice, chatMsg("how do I reset my password", streamed))
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d (%s): %s", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			evs := Events(t, r.Body)
			if len(evs) != len(tt.deltas)+1 {
				t.Fatalf("events = %d, want %d deltas and done: %s", len(evs), len(tt.deltas), r.Body)
			}
			for i, want := range tt.deltas {
				var d chatapi.DeltaEvent
				if err := json.Unmarshal(evs[i].Data, &d); err != nil || evs[i].Name != "delta" || d.Text != want {
					t.Errorf("event %d = %s %s, want delta %q", i, evs[i].Name, evs[i].Data, want)
				}
			}
			last := evs[len(evs)-1]
			var done chatapi.ChatResponse
			if err := json.Unmarshal(last.Data, &done); err != nil || last.Name != "done" {
				t.Fatalf("last event = %s %s", last.Name, last.Data)
			}
			if done.Message != strings.Join(tt.deltas, "") || done.Model != tt.model {
				t.Errorf("done = %+v", done)
			}
			d := conversation(e, t, alice, tt.cat, done.ConversationID)
			if len(d.Messages) != 2 || d.Messages[1].Content != done.Message {
				t.Errorf("stored = %+v", d.Messages)
			}
		})
	}
}

func TestStreamFailureMidReplyIsAnErrorEvent(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	e.Model.Hang = true // the first chunk, then nothing until the 1 s time-out
	r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("tell me", streamed))
	evs := Events(t, r.Body)
	if r.Status != http.StatusOK || len(evs) != 2 || evs[0].Name != "delta" || evs[1].Name != "error" {
		t.Fatalf("status %d events %s", r.Status, r.Body)
	}
	var b base.ErrorBody
	if err := json.Unmarshal(evs[1].Data, &b); err != nil || b.Status != http.StatusGatewayTimeout || b.Code != "UPSTREAM_TIMEOUT" || strings.Contains(b.Message, "secret") {
		t.Errorf("error event = %s", evs[1].Data)
	}
	list := e.Call(t, http.MethodGet, ChatPath+"/conversations?catname="+AgentCat, alice, nil)
	var l chatapi.ConversationList
	list.Decode(t, &l)
	if len(l.Conversations) != 1 {
		t.Fatalf("conversations = %s", list.Body)
	}
	d := conversation(e, t, alice, AgentCat, l.Conversations[0].ID)
	if len(d.Messages) != 2 || d.Messages[0].Content != "tell me" || d.Messages[1].Content != "Hel" {
		t.Errorf("stored = %+v, want the message and the partial reply", d.Messages)
	}
}

func TestClientDisconnectCancelsUpstreamAndKeepsThePart(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	e.Model.Hang = true
	ctx, cancel := ContextWithCancel(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Srv.URL+ChatPath+"/chat?catname="+AgentCat,
		strings.NewReader(`{"message":"tell me","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", alice)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 4096)
	n, err := res.Body.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "event: delta") {
		t.Fatalf("first read = %q, %v", buf[:n], err)
	}
	cancel()
	<-e.Model.Cancelled // the upstream call was cancelled
	// The turn is stored after the cancellation reached the service: wait
	// for it through the API.
	WaitFor(t, func() bool {
		r := e.Call(t, http.MethodGet, ChatPath+"/conversations?catname="+AgentCat, alice, nil)
		var l chatapi.ConversationList
		r.Decode(t, &l)
		if len(l.Conversations) != 1 {
			return false
		}
		d := conversation(e, t, alice, AgentCat, l.Conversations[0].ID)
		return len(d.Messages) == 2 && d.Messages[1].Content == "Hel"
	})
}
