package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/openaiapi"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
)

func completion(model string, stream bool, msgs ...string) map[string]any {
	var m []map[string]any
	for i := 0; i+1 < len(msgs); i += 2 {
		m = append(m, map[string]any{"role": msgs[i], "content": msgs[i+1]})
	}
	b := map[string]any{"model": model, "messages": m}
	if stream {
		b["stream"], b["stream_options"] = true, map[string]any{"include_usage": true}
	}
	return b
}

func TestModelsListsTheCats(t *testing.T) {
	e := apitest.NewChatEnv(t)
	r := e.Call(t, http.MethodGet, "/v1/models", e.Token(t, "alice", "user"), nil)
	var list openaiapi.ModelList
	r.Decode(t, &list)
	var ids []string
	for _, m := range list.Data {
		if m.Object != "model" || m.OwnedBy != "catsrv" || m.Created == 0 {
			t.Errorf("model %+v", m)
		}
		ids = append(ids, m.ID)
	}
	want := []string{apitest.AgentCat, apitest.BareCat, apitest.CustomCat, apitest.LegacyCat, apitest.ToolsCat}
	slices.Sort(want)
	if r.Status != http.StatusOK || list.Object != "list" || !slices.Equal(ids, want) {
		t.Fatalf("%d %s, want %v", r.Status, r.Body, want)
	}
}

func TestCompletionIsATurnOfAConversation(t *testing.T) {
	e := apitest.NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	r := e.Call(t, http.MethodPost, "/v1/chat/completions", alice,
		completion(apitest.LegacyCat, false, "system", "be nice", "user", "How do I reset my password?"))
	var c openaiapi.Completion
	r.Decode(t, &c)
	conv := r.Header.Get(openaiapi.ConversationHeader)
	if r.Status != http.StatusOK || conv == "" || c.Object != "chat.completion" || c.Model != apitest.LegacyCat || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != "Use the forgot password link on the sign-in page." || c.Choices[0].FinishReason != "stop" ||
		len(c.Sources) != 1 || c.Sources[0].ID != "reset-password" {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Body)
	}
	// Sent back, the header continues the conversation; without it a new one starts.
	r = e.Call(t, http.MethodPost, "/v1/chat/completions", alice, completion(apitest.LegacyCat, false, "user", "hi"), openaiapi.ConversationHeader+": "+conv)
	if r.Status != http.StatusOK || r.Header.Get(openaiapi.ConversationHeader) != conv {
		t.Fatalf("continued: %d %v %s", r.Status, r.Header, r.Body)
	}
	_, msgs, err := e.Convs.Conversation(t.Context(), chat.Owner{Cat: apitest.LegacyCat, UserID: "alice"}, conv)
	if err != nil || len(msgs) != 4 || msgs[0].Content != "How do I reset my password?" || msgs[2].Content != "hi" {
		t.Fatalf("conversation: %v %+v", err, msgs)
	}
	r = e.Call(t, http.MethodPost, "/v1/chat/completions", alice, completion(apitest.LegacyCat, false, "user", "hi"))
	if other := r.Header.Get(openaiapi.ConversationHeader); r.Status != http.StatusOK || other == "" || other == conv {
		t.Fatalf("new: %d %v", r.Status, r.Header)
	}
	// Each call is an interaction analytics counts.
	r = e.Call(t, http.MethodGet, "/api/v1/analytics/all?catname="+apitest.LegacyCat+"&startDate=2024-01-01&endDate=2025-01-01", e.Token(t, "root", "admin"), nil)
	var all struct {
		Total int `json:"total_interactions"`
	}
	r.Decode(t, &all)
	if all.Total != 3 {
		t.Fatalf("interactions: %s", r.Body)
	}
}

func TestAgentStreamSeesTheHistory(t *testing.T) {
	e := apitest.NewChatEnv(t)
	r := e.Call(t, http.MethodPost, "/v1/chat/completions", e.Token(t, "alice", "user"),
		completion(apitest.AgentCat, true, "system", "Speak French.", "user", "first", "assistant", "premier", "user", "second"))
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") || r.Header.Get(openaiapi.ConversationHeader) == "" {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Body)
	}
	var text strings.Builder
	var chunks []openaiapi.Chunk
	lines := strings.Split(strings.TrimSpace(string(r.Body)), "\n\n")
	if lines[len(lines)-1] != "data: [DONE]" {
		t.Fatalf("no [DONE]: %s", r.Body)
	}
	for _, l := range lines[:len(lines)-1] {
		var c openaiapi.Chunk
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %q: %v", l, err)
		}
		chunks = append(chunks, c)
		if len(c.Choices) == 1 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	last, stop := chunks[len(chunks)-1], chunks[len(chunks)-2]
	if text.String() != "Hello there" || len(last.Choices) != 0 || last.CompletionUsage == nil ||
		stop.Choices[0].FinishReason == nil || *stop.Choices[0].FinishReason != "stop" || chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Fatalf("stream: %s", r.Body)
	}
	var got []string
	for _, m := range e.Model.Last()["messages"].([]any) {
		mm := m.(map[string]any)
		got = append(got, mm["role"].(string)+":"+mm["content"].(string))
	}
	want := []string{"system:Be brief.", "system:Speak French.", "user:first", "assistant:premier", "user:second"}
	if !slices.Equal(got, want) {
		t.Fatalf("the model saw %q, want %q", got, want)
	}
}

func TestErrorsHaveOpenAIShape(t *testing.T) {
	e := apitest.NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	tests := []struct {
		name, auth string
		body       any
		status     int
		typ, param string
	}{
		{"no token", "", completion(apitest.LegacyCat, false, "user", "hi"), http.StatusUnauthorized, "authentication_error", ""},
		{"bad token", "Bearer nope", completion(apitest.LegacyCat, false, "user", "hi"), http.StatusUnauthorized, "authentication_error", ""},
		{"unknown CAT", alice, completion("nosuchcat", false, "user", "hi"), http.StatusNotFound, "not_found_error", ""},
		{"not JSON", alice, "{", http.StatusBadRequest, "invalid_request_error", ""},
		{"no body", alice, nil, http.StatusBadRequest, "invalid_request_error", ""},
		{"no model", alice, completion("", false, "user", "hi"), http.StatusBadRequest, "invalid_request_error", "model"},
		{"no user message", alice, completion(apitest.LegacyCat, false, "system", "hi"), http.StatusBadRequest, "invalid_request_error", "messages"},
		{"empty message", alice, completion(apitest.LegacyCat, false, "user", " "), http.StatusBadRequest, "invalid_request_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(t, http.MethodPost, "/v1/chat/completions", tt.auth, tt.body)
			checkError(t, r, tt.status, tt.typ, tt.param)
		})
	}
	t.Run("models without token", func(t *testing.T) {
		checkError(t, e.Call(t, http.MethodGet, "/v1/models", "", nil), http.StatusUnauthorized, "authentication_error", "")
	})
	t.Run("rate-limited model", func(t *testing.T) {
		e.Model.Status = http.StatusTooManyRequests
		r := e.Call(t, http.MethodPost, "/v1/chat/completions", alice, completion(apitest.AgentCat, false, "user", "hi"))
		checkError(t, r, http.StatusTooManyRequests, "rate_limit_error", "")
		if r.Header.Get("Retry-After") == "" || strings.Contains(string(r.Body), "secret") {
			t.Fatalf("%v %s", r.Header, r.Body)
		}
		// The same failure on /api/v1/cat stays the model's failure.
		if r := e.Call(t, http.MethodPost, apitest.ChatPath+"/chat?catname="+apitest.AgentCat, alice, map[string]any{"message": "hi"}); r.Status != http.StatusBadGateway {
			t.Fatalf("/api: %d %s", r.Status, r.Body)
		}
	})
}

func checkError(t *testing.T, r apitest.Resp, status int, typ, param string) {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	r.Decode(t, &body)
	keys := []string{}
	for k := range body.Error {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	msg, _ := body.Error["message"].(string)
	gotParam, _ := body.Error["param"].(string)
	if r.Status != status || body.Error["type"] != typ || msg == "" || gotParam != param ||
		!slices.Equal(keys, []string{"code", "message", "param", "type"}) {
		t.Fatalf("%d %s, want %d %s", r.Status, r.Body, status, typ)
	}
}

// TestBudgetRefusalIsARateLimit: an agent CAT whose monthly token budget
// is spent answers the OpenAI route with 429 in OpenAI's shape, with
// Retry-After until the next UTC month.
func TestBudgetRefusalIsARateLimit(t *testing.T) {
	e := apitest.NewChatEnv(t, func(c *catconfig.Cat) {
		if c.Name == apitest.ToolsCat {
			c.Chat.Budget.MonthlyTokens = 10
		}
	})
	e.Scripted.Script = openaitest.Steps(openaitest.Reply{Text: "Fine.", Usage: 25})
	alice := e.Token(t, "alice", "user")
	if r := e.Call(t, http.MethodPost, "/v1/chat/completions", alice, completion(apitest.ToolsCat, false, "user", "first")); r.Status != http.StatusOK {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r := e.Call(t, http.MethodPost, "/v1/chat/completions", alice, completion(apitest.ToolsCat, true, "user", "second"))
	var body openaiapi.ErrorResponse
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != http.StatusTooManyRequests || body.Error.Type != "rate_limit_error" {
		t.Fatalf("second: %d %s", r.Status, r.Body)
	}
	next := time.Date(apitest.Now.Year(), apitest.Now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	if got, want := r.Header.Get("Retry-After"), strconv.Itoa(int(next.Sub(apitest.Now).Seconds())); got != want {
		t.Errorf("Retry-After %q, want %s", got, want)
	}
}
