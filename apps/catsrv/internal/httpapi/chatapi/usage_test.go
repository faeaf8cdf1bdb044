package chatapi_test

import (
	"fmt"
	"net/http"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

// TestTurnsRecordUsage: an agent turn of two model calls against the
// scripted OpenAI server stores its interaction with the prompt and
// completion tokens of both calls summed, its latency and, streamed, the
// time to its first token (nil when the reply came in one piece); a
// legacy turn stores its latency and no tokens.
func TestTurnsRecordUsage(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := NewChatEnv(t)
			addFiles(e)
			// Usage 10 then 7: 5+3 prompt tokens, 5+4 completion tokens.
			e.Scripted.Script = twoCalls("Use the reset link.")
			alice := e.Token(t, "alice", "user")
			body := chatMsg("how do I reset my password?")
			if stream {
				streamed(body)
			}
			if r := e.Call(t, http.MethodPost, toolsChat, alice, body); r.Status != http.StatusOK {
				t.Fatalf("agent turn: %d %s", r.Status, r.Body)
			}
			if r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+LegacyCat, alice, chatMsg("hi", func(b map[string]any) { b["stream"] = stream })); r.Status != http.StatusOK {
				t.Fatalf("legacy turn: %d %s", r.Status, r.Body)
			}
			all := e.Recorded.All()
			if len(all) != 2 {
				t.Fatalf("%d interactions stored, want 2", len(all))
			}
			agent, legacy := all[0].Usage, all[1].Usage
			if agent.InputTokens != 8 || agent.OutputTokens != 9 {
				t.Errorf("agent tokens %d in, %d out; want 8, 9", agent.InputTokens, agent.OutputTokens)
			}
			if legacy.InputTokens != 0 || legacy.OutputTokens != 0 {
				t.Errorf("legacy tokens %d in, %d out; want none", legacy.InputTokens, legacy.OutputTokens)
			}
			for name, u := range map[string]struct{ latency, first *float64 }{
				"agent": {agent.LatencyMS, agent.FirstTokenMS}, "legacy": {legacy.LatencyMS, legacy.FirstTokenMS},
			} {
				switch {
				case u.latency == nil || *u.latency <= 0:
					t.Errorf("%s latency %v, want a time", name, u.latency)
				case !stream && u.first != nil:
					t.Errorf("%s first token at %v ms in a reply given whole", name, *u.first)
				case stream && (u.first == nil || *u.first <= 0 || *u.first > *u.latency):
					t.Errorf("%s first token %v, want a time within the latency %v", name, u.first, *u.latency)
				}
			}
		})
	}
}

// TestMessagesCarryIDs: every message of a conversation, the agent's
// tool steps included, comes with an id, distinct and the same at every
// read; the turn's interaction is named by its answer's id.
func TestMessagesCarryIDs(t *testing.T) {
	e := NewChatEnv(t)
	addFiles(e)
	e.Scripted.Script = twoCalls("Use the reset link.")
	alice := e.Token(t, "alice", "user")
	r := e.Call(t, http.MethodPost, toolsChat, alice, chatMsg("how do I reset my password?"))
	var resp chatapi.ChatResponse
	r.Decode(t, &resp)
	if r.Status != http.StatusOK {
		t.Fatalf("chat: %d %s", r.Status, r.Body)
	}
	d := conversation(e, t, alice, ToolsCat, resp.ConversationID)
	again := conversation(e, t, alice, ToolsCat, resp.ConversationID)
	seen := map[string]bool{}
	for i, m := range d.Messages {
		if m.ID == "" || seen[m.ID] || again.Messages[i].ID != m.ID {
			t.Errorf("message %d (%s) has id %q: empty, repeated or not stable (then %q)", i, m.Role, m.ID, again.Messages[i].ID)
		}
		seen[m.ID] = true
	}
	answer := d.Messages[len(d.Messages)-1]
	if all := e.Recorded.All(); len(all) != 1 || answer.Role != "assistant" || all[0].InteractionID != answer.ID {
		t.Errorf("interaction named %q, want the answer's id %q", all[0].InteractionID, answer.ID)
	}
}
