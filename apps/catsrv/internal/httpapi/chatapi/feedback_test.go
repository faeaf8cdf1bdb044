package chatapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/core/analytics"
)

// feedbackPath is the feedback route of a message of a conversation of
// LegacyCat.
func feedbackPath(conv, msg string) string {
	return ChatPath + "/conversations/" + conv + "/messages/" + msg + "/feedback?catname=" + LegacyCat
}

// TestFeedbackRoutes: the owner rates an answer (204), again (replacing
// it) and removes the rating (204, twice); the stored interaction of the
// answer follows each step. Everything else is refused with the chat
// error body: another user (404), the user's own message (422), an
// unknown message (404), a rating, reason or comment out of bounds (422),
// no token (401).
func TestFeedbackRoutes(t *testing.T) {
	e := NewChatEnv(t)
	alice, bob := e.Token(t, "alice", "user"), e.Token(t, "bob", "user")
	r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+LegacyCat, alice, chatMsg("reset my password"))
	var resp chatapi.ChatResponse
	r.Decode(t, &resp)
	d := conversation(e, t, alice, LegacyCat, resp.ConversationID)
	question, answer := d.Messages[0].ID, d.Messages[1].ID
	stored := func() analytics.Feedback {
		t.Helper()
		all := e.Recorded.All()
		if len(all) != 1 || all[0].InteractionID != answer {
			t.Fatalf("interactions %+v, want one named %q", all, answer)
		}
		return all[0].Feedback
	}
	put := func(auth, conv, msg string, body any) Resp {
		t.Helper()
		return e.Call(t, http.MethodPut, feedbackPath(conv, msg), auth, body)
	}

	if r := put(alice, resp.ConversationID, answer, map[string]any{"rating": "up"}); r.Status != http.StatusNoContent {
		t.Fatalf("up: %d %s", r.Status, r.Body)
	}
	if got := stored(); got != (analytics.Feedback{Rating: "up"}) {
		t.Fatalf("after up: %+v", got)
	}
	down := map[string]any{"rating": "down", "reason": "wrong", "comment": "The link is gone."}
	if r := put(alice, resp.ConversationID, answer, down); r.Status != http.StatusNoContent {
		t.Fatalf("down: %d %s", r.Status, r.Body)
	}
	if got := stored(); got != (analytics.Feedback{Rating: "down", Reason: "wrong", Comment: "The link is gone."}) {
		t.Fatalf("after down: %+v", got)
	}

	refused := []struct {
		name      string
		auth      string
		conv, msg string
		body      any
		status    int
		code      string
	}{
		{"another user", bob, resp.ConversationID, answer, map[string]any{"rating": "up"}, http.StatusNotFound, "NOT_FOUND"},
		{"the user's message", alice, resp.ConversationID, question, map[string]any{"rating": "up"}, http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"unknown message", alice, resp.ConversationID, "nope", map[string]any{"rating": "up"}, http.StatusNotFound, "NOT_FOUND"},
		{"unknown conversation", alice, "nope", answer, map[string]any{"rating": "up"}, http.StatusNotFound, "NOT_FOUND"},
		{"reason not configured", alice, resp.ConversationID, answer, map[string]any{"rating": "down", "reason": "boring"}, http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"message id with NUL", alice, resp.ConversationID, "a%00b", map[string]any{"rating": "up"}, http.StatusUnprocessableEntity, "VALIDATION_ERROR"},
		{"no token", "", resp.ConversationID, answer, map[string]any{"rating": "up"}, http.StatusUnauthorized, "UNAUTHORIZED"},
	}
	for _, c := range refused {
		r := put(c.auth, c.conv, c.msg, c.body)
		if r.Status != c.status || r.ErrorBody(t).Code != c.code || r.ErrorBody(t).Status != c.status {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	// Malformed bodies are huma's 422.
	for name, body := range map[string]any{
		"no rating": map[string]any{"comment": "x"}, "other rating": map[string]any{"rating": "meh"},
		"long comment": map[string]any{"rating": "down", "comment": strings.Repeat("é", 2001)},
	} {
		if r := put(alice, resp.ConversationID, answer, body); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, r.Status, r.Body)
		}
	}
	if r := put(alice, resp.ConversationID, answer, map[string]any{"rating": "down", "comment": strings.Repeat("é", 2000)}); r.Status != http.StatusNoContent {
		t.Errorf("a comment of 2000 characters: %d %s", r.Status, r.Body)
	}
	if r := e.Call(t, http.MethodDelete, feedbackPath(resp.ConversationID, answer), bob, nil); r.Status != http.StatusNotFound {
		t.Errorf("bob's delete: %d %s", r.Status, r.Body)
	}
	for range 2 {
		if r := e.Call(t, http.MethodDelete, feedbackPath(resp.ConversationID, answer), alice, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if got := stored(); got != (analytics.Feedback{}) {
			t.Fatalf("after delete: %+v", got)
		}
	}
}

// FuzzFeedbackBody sends any body to the feedback route of an answer of
// the caller's (over the memory stores): never a server failure, 204,
// 400 (not JSON) or 422 only, and a 204 only for a body the rules accept: a rating up or
// down, a configured reason or none, a comment of at most 2000
// characters of storable text.
func FuzzFeedbackBody(f *testing.F) {
	for _, b := range []string{
		`{"rating":"up"}`, `{"rating":"down","reason":"wrong","comment":"no"}`, `{"rating":"down","reason":"boring"}`,
		`{"rating":"meh"}`, `{"rating":"up","comment":"a\u0000b"}`, `{"rating":"up","comment":"` + "\xff" + `"}`,
		`{"rating":"up","reason":null,"comment":null}`, `{"rating":"up","reason":""}`, `{}`, `[]`, `null`, ``, `{"rating":`,
		`{"rating":"up","extra":1}`, `{"rating":"UP"}`, `{"rating":"down","comment":"` + strings.Repeat("é", 2001) + `"}`,
	} {
		f.Add(b)
	}
	e := NewChatEnv(f)
	alice := e.Token(f, "alice", "user")
	var resp chatapi.ChatResponse
	e.Call(f, http.MethodPost, ChatPath+"/chat?catname="+LegacyCat, alice, chatMsg("reset my password")).Decode(f, &resp)
	var d chatapi.ConversationDetail
	e.Call(f, http.MethodGet, ChatPath+"/conversations/"+resp.ConversationID+"?catname="+LegacyCat, alice, nil).Decode(f, &d)
	target := feedbackPath(resp.ConversationID, d.Messages[1].ID)
	f.Fuzz(func(t *testing.T, body string) {
		r := e.Call(t, http.MethodPut, target, alice, body)
		switch r.Status {
		case http.StatusNoContent:
			var b struct{ Rating, Reason, Comment *string }
			if err := json.Unmarshal([]byte(body), &b); err != nil || b.Rating == nil ||
				(*b.Rating != "up" && *b.Rating != "down") ||
				(b.Reason != nil && *b.Reason != "" && *b.Reason != "wrong" && *b.Reason != "unsafe") ||
				(b.Comment != nil && (utf8.RuneCountInString(*b.Comment) > 2000 || strings.ContainsRune(*b.Comment, 0))) {
				t.Errorf("%q accepted (%v)", body, err)
			}
		case http.StatusBadRequest, http.StatusUnprocessableEntity: // not JSON; against the schema or the rules
		default:
			t.Errorf("%q: status %d %s", body, r.Status, r.Body)
		}
	})
}
