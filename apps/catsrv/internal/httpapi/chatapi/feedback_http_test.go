package chatapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

// caller serves one request of the app under test: method, target, the
// Authorization header and a JSON body ("" for none).
type caller func(t *testing.T, method, target, auth, body string) (int, []byte)

// ratings is the part of GET /api/v1/analytics/feedback the test reads.
type ratings struct {
	Up   int64 `json:"up"`
	Down int64 `json:"down"`
}

// checkFeedbackOverHTTP rates an answer of user's in conv with PUT, rates
// it again, and removes the rating with DELETE, reading the CAT's
// /api/v1/analytics/feedback as admin after each step: the answer's vote
// is counted at once, replaced, then gone.
func checkFeedbackOverHTTP(t *testing.T, do caller, user, admin, conv string) {
	t.Helper()
	status, body := do(t, http.MethodGet, ChatPath+"/conversations/"+conv+"?catname="+LegacyCat, user, "")
	var d chatapi.ConversationDetail
	if status != http.StatusOK || json.Unmarshal(body, &d) != nil || len(d.Messages) < 2 {
		t.Fatalf("conversation: %d %s", status, body)
	}
	answer := d.Messages[len(d.Messages)-1].ID
	read := func() ratings {
		t.Helper()
		status, body := do(t, http.MethodGet, "/api/v1/analytics/feedback?catname="+LegacyCat, admin, "")
		var r ratings
		if status != http.StatusOK || json.Unmarshal(body, &r) != nil {
			t.Fatalf("GET feedback: %d %s", status, body)
		}
		return r
	}
	set := func(method, body string) {
		t.Helper()
		if status, b := do(t, method, feedbackPath(conv, answer), user, body); status != http.StatusNoContent {
			t.Fatalf("%s feedback: %d %s", method, status, b)
		}
	}
	before := read()
	set(http.MethodPut, `{"rating":"up"}`)
	if got, want := read(), (ratings{before.Up + 1, before.Down}); got != want {
		t.Fatalf("after up: %+v, want %+v", got, want)
	}
	set(http.MethodPut, `{"rating":"down"}`)
	if got, want := read(), (ratings{before.Up, before.Down + 1}); got != want {
		t.Fatalf("after down: %+v, want %+v", got, want)
	}
	set(http.MethodDelete, "")
	if got := read(); got != before {
		t.Fatalf("after delete: %+v, want %+v", got, before)
	}
}

// TestFeedbackOverHTTP: a rating given with PUT shows in the analytics
// feedback of the CAT and DELETE takes it out again, through the whole
// HTTP app over the memory stores.
func TestFeedbackOverHTTP(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	var resp chatapi.ChatResponse
	e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+LegacyCat, alice, chatMsg("reset my password")).Decode(t, &resp)
	do := func(t *testing.T, method, target, auth, body string) (int, []byte) {
		var b any
		if body != "" {
			b = body
		}
		r := e.Call(t, method, target, auth, b)
		return r.Status, r.Body
	}
	checkFeedbackOverHTTP(t, do, alice, e.Token(t, "root", "admin"), resp.ConversationID)
}

// TestFeedbackOverHTTPSQL is TestFeedbackOverHTTP over SQLite and
// PostgreSQL, as serve wires the app.
func TestFeedbackOverHTTPSQL(t *testing.T) {
	for _, b := range SQLBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := NewSQLEnv(t, b)
			do := func(t *testing.T, method, target, auth, body string) (int, []byte) {
				r := e.Do(t, method, target, auth, body)
				return r.Status, r.Body
			}
			checkFeedbackOverHTTP(t, do, e.User, e.Admin, e.Conv)
		})
	}
}
