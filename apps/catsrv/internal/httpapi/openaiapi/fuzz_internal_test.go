package openaiapi

import (
	"encoding/json"
	"testing"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// FuzzCompletionBody: any body a client sends either decodes into a turn
// whose message is the text of its last user message and whose history
// holds at most the messages before it, or is refused as the caller's
// mistake (errs.KindInvalid), never a panic.
func FuzzCompletionBody(f *testing.F) {
	for _, seed := range []string{
		`{"model":"shop","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"bot","messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]},{"role":"assistant","content":null},{"role":"user","content":"b"}]}`,
		`{"model":"shop","messages":[{"role":"user","content":7}]}`,
		`{"messages":[{"role":"tool","content":"r"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CompletionRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		message, history, err := turn(req.Messages)
		if err != nil {
			if errs.KindOf(err) != errs.KindInvalid {
				t.Fatalf("%q: %v is not the caller's mistake", body, err)
			}
			return
		}
		last := -1
		for i, m := range req.Messages {
			if m.Role == chat.RoleUser {
				last = i
			}
		}
		want, err := text(req.Messages[last].Content)
		if err != nil || message != want || len(history) > last {
			t.Fatalf("%q: message %q (want %q, %v), %d history entries before message %d", body, message, want, err, len(history), last)
		}
	})
}
