package openai_test

import (
	"fmt"
	"testing"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/core/chat"
)

// TestUsageSplit: a reply's prompt and completion tokens come back apart
// (with their total and the finish reason), streamed or whole; a stream
// asks for them (stream_options.include_usage), since servers send no
// usage chunk otherwise; a server that reports none leaves them 0.
func TestUsageSplit(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s := scripted(t, openaitest.Reply{Text: "Fine.", Usage: 41}, openaitest.Reply{Text: "No usage."})
			m := openai.New(openai.Options{})
			call := func() chat.Completion {
				t.Helper()
				var c chat.Completion
				var err error
				if stream {
					c, err = m.Stream(t.Context(), toolRequest(s), func(string) error { return nil })
				} else {
					c, err = m.Complete(t.Context(), toolRequest(s))
				}
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			c := call()
			// The scripted server splits 41 into 20 prompt and 21 completion tokens.
			if c.InputTokens != 20 || c.OutputTokens != 21 || c.TokensUsed == nil || *c.TokensUsed != 41 || c.FinishReason != "stop" {
				t.Fatalf("completion %+v (tokens %v): want 20 in, 21 out, 41 in all, finish stop", c, c.TokensUsed)
			}
			if stream {
				if opts, _ := s.Requests()[0]["stream_options"].(map[string]any); opts["include_usage"] != true {
					t.Errorf("stream_options = %v, want include_usage true", s.Requests()[0]["stream_options"])
				}
			}
			if c := call(); c.InputTokens != 0 || c.OutputTokens != 0 || c.TokensUsed != nil {
				t.Errorf("no usage reported: completion %+v", c)
			}
		})
	}
}
