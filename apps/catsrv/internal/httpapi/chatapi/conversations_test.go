package chatapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

// startConversations has the user start one conversation per message and
// returns their ids in order.
func startConversations(e *ChatEnv, t *testing.T, auth string, messages ...string) []string {
	t.Helper()
	var ids []string
	for _, m := range messages {
		r := e.Call(t, http.MethodPost, ChatPath+"/chat", auth, chatMsg(m))
		var c chatapi.ChatResponse
		r.Decode(t, &c)
		if r.Status != http.StatusOK {
			t.Fatalf("chat: %d %s", r.Status, r.Body)
		}
		ids = append(ids, c.ConversationID)
	}
	return ids
}

func list(e *ChatEnv, t *testing.T, auth, query string) chatapi.ConversationList {
	t.Helper()
	r := e.Call(t, http.MethodGet, ChatPath+"/conversations"+query, auth, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var l chatapi.ConversationList
	r.Decode(t, &l)
	return l
}

func search(e *ChatEnv, t *testing.T, auth, q string) []string {
	t.Helper()
	r := e.Call(t, http.MethodGet, ChatPath+"/conversations/search?q="+url.QueryEscape(q), auth, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	var s chatapi.SearchResults
	r.Decode(t, &s)
	var ids []string
	for _, h := range s.Results {
		if h.Snippet == "" {
			t.Errorf("hit %s without a snippet", h.ID)
		}
		ids = append(ids, h.ID)
	}
	return ids
}

func ids(cs []chatapi.ConversationSummary) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestConversationsListGetRenameDeleteSearch(t *testing.T) {
	e := NewChatEnv(t)
	alice, bob := e.Token(t, "alice", "user"), e.Token(t, "bob", "user")
	a := startConversations(e, t, alice, "where are the penguins", "reset my password please", "hello zebra friends")
	b := startConversations(e, t, bob, "penguins for bob")

	t.Run("newest first with a cursor", func(t *testing.T) {
		p1 := list(e, t, alice, "?limit=2")
		if strings.Join(ids(p1.Conversations), ",") != a[2]+","+a[1] || p1.NextCursor == nil {
			t.Fatalf("page 1 = %v next %v", ids(p1.Conversations), p1.NextCursor)
		}
		p2 := list(e, t, alice, "?limit=2&cursor="+url.QueryEscape(*p1.NextCursor))
		if strings.Join(ids(p2.Conversations), ",") != a[0] || p2.NextCursor != nil {
			t.Fatalf("page 2 = %v next %v", ids(p2.Conversations), p2.NextCursor)
		}
		if got := ids(list(e, t, bob, "").Conversations); strings.Join(got, ",") != b[0] {
			t.Errorf("bob lists %v", got)
		}
		if got := list(e, t, alice, "?catname="+AgentCat).Conversations; len(got) != 0 {
			t.Errorf("another CAT lists %v", ids(got))
		}
	})
	t.Run("get in order", func(t *testing.T) {
		d := conversation(e, t, alice, LegacyCat, a[0])
		if d.Name != "where are the penguins" || len(d.Messages) != 2 || d.Messages[0].Role != "user" || d.Messages[1].Role != "assistant" {
			t.Errorf("conversation = %+v", d)
		}
	})
	t.Run("search is ranked, scoped and follows renames", func(t *testing.T) {
		if got := search(e, t, alice, "penguins"); strings.Join(got, ",") != a[0] {
			t.Errorf("alice finds %v", got)
		}
		if got := search(e, t, bob, "penguins"); strings.Join(got, ",") != b[0] {
			t.Errorf("bob finds %v", got)
		}
		r := e.Call(t, http.MethodPut, ChatPath+"/conversations/"+a[1]+"/rename", alice, map[string]string{"name": "  Account walrus  "})
		var s chatapi.ConversationSummary
		r.Decode(t, &s)
		if r.Status != http.StatusOK || s.Name != "Account walrus" || s.ID != a[1] {
			t.Fatalf("rename: %d %s", r.Status, r.Body)
		}
		if got := search(e, t, alice, "walrus"); strings.Join(got, ",") != a[1] {
			t.Errorf("search after rename finds %v", got)
		}
		if got := ids(list(e, t, alice, "").Conversations); got[0] != a[1] {
			t.Errorf("a rename moves the conversation first: %v", got)
		}
	})
	t.Run("others get 404", func(t *testing.T) {
		for _, r := range []Resp{
			e.Call(t, http.MethodGet, ChatPath+"/conversations/"+a[0], bob, nil),
			e.Call(t, http.MethodPut, ChatPath+"/conversations/"+a[0]+"/rename", bob, map[string]string{"name": "mine now"}),
			e.Call(t, http.MethodDelete, ChatPath+"/conversations/"+a[0], bob, nil),
			e.Call(t, http.MethodGet, ChatPath+"/conversations/"+a[0]+"?catname="+AgentCat, alice, nil),
		} {
			if b := r.ErrorBody(t); r.Status != http.StatusNotFound || b.Code != "NOT_FOUND" {
				t.Errorf("got %d %+v", r.Status, b)
			}
		}
		if d := conversation(e, t, alice, LegacyCat, a[0]); d.Name != "where are the penguins" {
			t.Errorf("bob's rename changed alice's conversation: %q", d.Name)
		}
	})
	t.Run("delete", func(t *testing.T) {
		r := e.Call(t, http.MethodDelete, ChatPath+"/conversations/"+a[0], alice, nil)
		if r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.Call(t, http.MethodGet, ChatPath+"/conversations/"+a[0], alice, nil); r.Status != http.StatusNotFound {
			t.Errorf("get after delete: %d", r.Status)
		}
		if got := search(e, t, alice, "penguins"); len(got) != 0 {
			t.Errorf("search after delete finds %v", got)
		}
		if got := search(e, t, bob, "penguins"); len(got) != 1 {
			t.Errorf("alice's delete touched bob's: %v", got)
		}
	})
}

func TestConversationErrors(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	id := startConversations(e, t, alice, "hello there")[0]
	tests := []struct {
		name, method, path string
		auth               string
		body               any
		status             int
		message            string
	}{
		{"list without token", http.MethodGet, "/conversations", "", nil, 401, ""},
		{"limit too large", http.MethodGet, "/conversations?limit=101", alice, nil, 422, "limit"},
		{"bad cursor", http.MethodGet, "/conversations?cursor=xyz", alice, nil, 422, "cursor"},
		{"search without words", http.MethodGet, "/conversations/search?q=%20!", alice, nil, 422, "q:"},
		{"search limit", http.MethodGet, "/conversations/search?q=hello&limit=-1", alice, nil, 422, "limit"},
		{"empty name", http.MethodPut, "/conversations/" + id + "/rename", alice, map[string]string{"name": " "}, 422, "name"},
		{"long name", http.MethodPut, "/conversations/" + id + "/rename", alice, map[string]string{"name": strings.Repeat("n", 201)}, 422, "name"},
		{"delete unknown", http.MethodDelete, "/conversations/nope", alice, nil, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(t, tt.method, ChatPath+tt.path, tt.auth, tt.body)
			b := r.ErrorBody(t)
			if r.Status != tt.status || b.Status != tt.status || !strings.Contains(b.Message, tt.message) {
				t.Errorf("got %d %s, want %d with %q", r.Status, r.Body, tt.status, tt.message)
			}
		})
	}
	t.Run("missing q", func(t *testing.T) {
		if r := e.Call(t, http.MethodGet, ChatPath+"/conversations/search", alice, nil); r.Status != 422 {
			t.Errorf("got %d %s", r.Status, r.Body)
		}
	})
}
