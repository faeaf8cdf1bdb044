package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

// startConversations has the user start one conversation per message and
// returns their ids in order.
func (e *chatEnv) startConversations(t *testing.T, auth string, messages ...string) []string {
	t.Helper()
	var ids []string
	for _, m := range messages {
		r := e.call(t, http.MethodPost, chatPath+"/chat", auth, chatMsg(m))
		var c chatapi.ChatResponse
		r.decode(t, &c)
		if r.status != http.StatusOK {
			t.Fatalf("chat: %d %s", r.status, r.body)
		}
		ids = append(ids, c.ConversationID)
	}
	return ids
}

func (e *chatEnv) list(t *testing.T, auth, query string) chatapi.ConversationList {
	t.Helper()
	r := e.call(t, http.MethodGet, chatPath+"/conversations"+query, auth, nil)
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	var l chatapi.ConversationList
	r.decode(t, &l)
	return l
}

func (e *chatEnv) search(t *testing.T, auth, q string) []string {
	t.Helper()
	r := e.call(t, http.MethodGet, chatPath+"/conversations/search?q="+url.QueryEscape(q), auth, nil)
	if r.status != http.StatusOK {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	var s chatapi.SearchResults
	r.decode(t, &s)
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
	e := newChatEnv(t)
	alice, bob := e.token(t, "alice", "user"), e.token(t, "bob", "user")
	a := e.startConversations(t, alice, "where are the penguins", "reset my password please", "hello zebra friends")
	b := e.startConversations(t, bob, "penguins for bob")

	t.Run("newest first with a cursor", func(t *testing.T) {
		p1 := e.list(t, alice, "?limit=2")
		if strings.Join(ids(p1.Conversations), ",") != a[2]+","+a[1] || p1.NextCursor == nil {
			t.Fatalf("page 1 = %v next %v", ids(p1.Conversations), p1.NextCursor)
		}
		p2 := e.list(t, alice, "?limit=2&cursor="+url.QueryEscape(*p1.NextCursor))
		if strings.Join(ids(p2.Conversations), ",") != a[0] || p2.NextCursor != nil {
			t.Fatalf("page 2 = %v next %v", ids(p2.Conversations), p2.NextCursor)
		}
		if got := ids(e.list(t, bob, "").Conversations); strings.Join(got, ",") != b[0] {
			t.Errorf("bob lists %v", got)
		}
		if got := e.list(t, alice, "?catname="+agentCat).Conversations; len(got) != 0 {
			t.Errorf("another CAT lists %v", ids(got))
		}
	})
	t.Run("get in order", func(t *testing.T) {
		d := e.conversation(t, alice, legacyCat, a[0])
		if d.Name != "where are the penguins" || len(d.Messages) != 2 || d.Messages[0].Role != "user" || d.Messages[1].Role != "assistant" {
			t.Errorf("conversation = %+v", d)
		}
	})
	t.Run("search is ranked, scoped and follows renames", func(t *testing.T) {
		if got := e.search(t, alice, "penguins"); strings.Join(got, ",") != a[0] {
			t.Errorf("alice finds %v", got)
		}
		if got := e.search(t, bob, "penguins"); strings.Join(got, ",") != b[0] {
			t.Errorf("bob finds %v", got)
		}
		r := e.call(t, http.MethodPut, chatPath+"/conversations/"+a[1]+"/rename", alice, map[string]string{"name": "  Account walrus  "})
		var s chatapi.ConversationSummary
		r.decode(t, &s)
		if r.status != http.StatusOK || s.Name != "Account walrus" || s.ID != a[1] {
			t.Fatalf("rename: %d %s", r.status, r.body)
		}
		if got := e.search(t, alice, "walrus"); strings.Join(got, ",") != a[1] {
			t.Errorf("search after rename finds %v", got)
		}
		if got := ids(e.list(t, alice, "").Conversations); got[0] != a[1] {
			t.Errorf("a rename moves the conversation first: %v", got)
		}
	})
	t.Run("others get 404", func(t *testing.T) {
		for _, r := range []resp{
			e.call(t, http.MethodGet, chatPath+"/conversations/"+a[0], bob, nil),
			e.call(t, http.MethodPut, chatPath+"/conversations/"+a[0]+"/rename", bob, map[string]string{"name": "mine now"}),
			e.call(t, http.MethodDelete, chatPath+"/conversations/"+a[0], bob, nil),
			e.call(t, http.MethodGet, chatPath+"/conversations/"+a[0]+"?catname="+agentCat, alice, nil),
		} {
			if b := r.errorBody(t); r.status != http.StatusNotFound || b.Code != "NOT_FOUND" {
				t.Errorf("got %d %+v", r.status, b)
			}
		}
		if d := e.conversation(t, alice, legacyCat, a[0]); d.Name != "where are the penguins" {
			t.Errorf("bob's rename changed alice's conversation: %q", d.Name)
		}
	})
	t.Run("delete", func(t *testing.T) {
		r := e.call(t, http.MethodDelete, chatPath+"/conversations/"+a[0], alice, nil)
		if r.status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if r := e.call(t, http.MethodGet, chatPath+"/conversations/"+a[0], alice, nil); r.status != http.StatusNotFound {
			t.Errorf("get after delete: %d", r.status)
		}
		if got := e.search(t, alice, "penguins"); len(got) != 0 {
			t.Errorf("search after delete finds %v", got)
		}
		if got := e.search(t, bob, "penguins"); len(got) != 1 {
			t.Errorf("alice's delete touched bob's: %v", got)
		}
	})
}

func TestConversationErrors(t *testing.T) {
	e := newChatEnv(t)
	alice := e.token(t, "alice", "user")
	id := e.startConversations(t, alice, "hello there")[0]
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
			r := e.call(t, tt.method, chatPath+tt.path, tt.auth, tt.body)
			b := r.errorBody(t)
			if r.status != tt.status || b.Status != tt.status || !strings.Contains(b.Message, tt.message) {
				t.Errorf("got %d %s, want %d with %q", r.status, r.body, tt.status, tt.message)
			}
		})
	}
	t.Run("missing q", func(t *testing.T) {
		if r := e.call(t, http.MethodGet, chatPath+"/conversations/search", alice, nil); r.status != 422 {
			t.Errorf("got %d %s", r.status, r.body)
		}
	})
}
