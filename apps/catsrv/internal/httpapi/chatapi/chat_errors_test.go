package chatapi_test

import (
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/core/auth"
)

func TestChatErrors(t *testing.T) {
	e := NewChatEnv(t)
	alice, bob := e.Token(t, "alice", "user"), e.Token(t, "bob", "user")
	first := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, chatMsg("hi"))
	var mine chatapi.ChatResponse
	first.Decode(t, &mine)

	revoked := e.Token(t, "alice", "user")
	claims, err := e.Tokens.Verify(strings.TrimPrefix(revoked, "Bearer "))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Sessions.Logout(t.Context(), &claims, "", auth.RequestMeta{}); err != nil {
		t.Fatal(err)
	}
	cookie := "Cookie: catsrv_access=" + strings.TrimPrefix(alice, "Bearer ")

	tests := []struct {
		name    string
		path    string
		auth    string
		body    any
		headers []string
		status  int
		code    string
		message string
	}{
		{name: "no token", path: "/chat", body: chatMsg("hi"), status: 401, code: "UNAUTHORIZED"},
		{name: "bad token", path: "/chat", auth: "Bearer nope", body: chatMsg("hi"), status: 401, code: "UNAUTHORIZED"},
		{name: "revoked token", path: "/chat", auth: revoked, body: chatMsg("hi"), status: 401, code: "UNAUTHORIZED", message: "revoked"},
		{name: "cookie without origin", path: "/chat", body: chatMsg("hi"), headers: []string{cookie}, status: 403, code: "FORBIDDEN", message: "Origin"},
		{name: "cookie from a foreign origin", path: "/chat", body: chatMsg("hi"), headers: []string{cookie, "Origin: " + RefusedOrigin}, status: 403, code: "FORBIDDEN"},
		{name: "empty message", path: "/chat", auth: alice, body: chatMsg("   "), status: 422, code: "VALIDATION_ERROR", message: "message: must not be empty"},
		{name: "oversized message", path: "/chat", auth: alice, body: chatMsg(strings.Repeat("a", 65)), status: 422, code: "VALIDATION_ERROR", message: "message: longer than 64 bytes"},
		{name: "oversized message streamed", path: "/chat", auth: alice, body: chatMsg(strings.Repeat("a", 65), streamed), status: 422, code: "VALIDATION_ERROR", message: "message: longer than 64 bytes"},
		{name: "unknown conversation", path: "/chat", auth: alice, body: chatMsg("hi", inConversation("nope")), status: 404, code: "NOT_FOUND"},
		{name: "foreign conversation", path: "/chat", auth: bob, body: chatMsg("hi", inConversation(mine.ConversationID)), status: 404, code: "NOT_FOUND"},
		{name: "unknown CAT", path: "/chat?catname=ghost", auth: alice, body: chatMsg("hi"), status: 404, code: "NOT_FOUND"},
		{name: "agent without endpoint", path: "/chat?catname=" + BareCat, auth: alice, body: chatMsg("hi"), status: 503, code: "UNAVAILABLE", message: "no model endpoint"},
		{name: "agent_chat without endpoint", path: "/agent_chat?catname=" + BareCat, auth: alice, body: chatMsg("hi"), status: 503, code: "UNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(t, http.MethodPost, ChatPath+tt.path, tt.auth, tt.body, tt.headers...)
			b := r.ErrorBody(t)
			if r.Status != tt.status || b.Status != tt.status || b.Code != tt.code || !strings.Contains(b.Message, tt.message) {
				t.Errorf("got %d %+v, want %d %s containing %q", r.Status, b, tt.status, tt.code, tt.message)
			}
			if (tt.status == 401) != (r.Header.Get("WWW-Authenticate") == "Bearer") {
				t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("missing message", func(t *testing.T) {
		r := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, `{"stream":false}`)
		var v base.ValidationError
		r.Decode(t, &v)
		if r.Status != 422 || len(v.Detail) == 0 {
			t.Errorf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("cookie from an allowed origin", func(t *testing.T) {
		r := e.Call(t, http.MethodPost, ChatPath+"/chat", "", chatMsg("hi"), cookie, "Origin: "+AllowedOrigin)
		if r.Status != http.StatusOK {
			t.Errorf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestUpstreamFailuresKeepTheMessage(t *testing.T) {
	tests := []struct {
		name   string
		status int
		hang   bool
		want   int
		code   string
	}{
		{"upstream error", http.StatusInternalServerError, false, http.StatusBadGateway, "UPSTREAM_FAILED"},
		{"upstream refuses the key", http.StatusUnauthorized, false, http.StatusBadGateway, "UPSTREAM_FAILED"},
		{"upstream time-out", 0, true, http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewChatEnv(t)
			alice := e.Token(t, "alice", "user")
			e.Model.Status, e.Model.Hang = tt.status, tt.hang
			r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("are you there"))
			b := r.ErrorBody(t)
			if r.Status != tt.want || b.Code != tt.code || strings.Contains(b.Message, "secret") {
				t.Fatalf("got %d %+v", r.Status, b)
			}
			list := e.Call(t, http.MethodGet, ChatPath+"/conversations?catname="+AgentCat, alice, nil)
			var l chatapi.ConversationList
			list.Decode(t, &l)
			if len(l.Conversations) != 1 {
				t.Fatalf("conversations = %s", list.Body)
			}
			d := conversation(e, t, alice, AgentCat, l.Conversations[0].ID)
			if len(d.Messages) != 1 || d.Messages[0].Content != "are you there" || d.Messages[0].Role != "user" {
				t.Errorf("stored = %+v, want the user's message only", d.Messages)
			}
		})
	}
}
