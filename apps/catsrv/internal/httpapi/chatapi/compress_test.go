package chatapi_test

import (
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

// TestChatStreamIsNotCompressed: with the whole app's middleware, a client
// that accepts gzip still gets the chat stream as plain server-sent
// events, whole; the JSON answer of the same route varies on
// Accept-Encoding.
func TestChatStreamIsNotCompressed(t *testing.T) {
	e := NewChatEnv(t)
	alice := e.Token(t, "alice", "user")
	r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("how do I reset my password", streamed), "Accept-Encoding: gzip")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d (%s): %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" {
		t.Fatalf("stream Content-Encoding %q", ce)
	}
	if evs := Events(t, r.Body); len(evs) != 4 {
		t.Errorf("events = %d, want 3 deltas and done: %s", len(evs), r.Body)
	}
	j := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+AgentCat, alice, chatMsg("hi"), "Accept-Encoding: gzip")
	if j.Status != http.StatusOK || !strings.Contains(j.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("JSON answer: status %d, Vary %q", j.Status, j.Header.Get("Vary"))
	}
}
