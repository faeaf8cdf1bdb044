package openai_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

func scripted(t *testing.T, replies ...openaitest.Reply) *openaitest.Server {
	t.Helper()
	s := openaitest.New(openaitest.Steps(replies...))
	t.Cleanup(s.Close)
	return s
}

func toolRequest(s *openaitest.Server) chat.ModelRequest {
	return chat.ModelRequest{
		Cat: "demo", BaseURL: s.BaseURL(), Model: "m", Timeout: 5 * time.Second, MaxReplyBytes: 64 << 10,
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: "Be brief."},
			{Role: chat.RoleUser, Content: "what files?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "old", Name: "files__list", Arguments: `{"path":"/"}`}, {ID: "bad", Name: "x", Arguments: "{oops"}}},
			{Role: chat.RoleTool, ToolCallID: "old", ToolName: "files__list", Content: "a.txt"},
			{Role: chat.RoleTool, ToolCallID: "bad", ToolName: "x", Content: "Error: not JSON"},
			{Role: chat.RoleUser, Content: "and now?"},
		},
		Tools: []chat.ToolSpec{
			{Name: "files__list", Server: "files", Tool: "list", Description: "List files.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "knowledge_search", Tool: "knowledge_search"},
		},
	}
}

// TestToolCallsBothWays: two parallel calls, streamed with their
// arguments split across chunks or whole, come back joined, with the
// usage of the usage chunk; the request carries the tools and the
// earlier calls and results in OpenAI's shape.
func TestToolCallsBothWays(t *testing.T) {
	calls := []openaitest.Call{
		{ID: "call_a", Name: "files__list", Arguments: `{"path":"/srv/docs"}`},
		{ID: "call_b", Name: "knowledge_search", Arguments: `{"query":"refund policy"}`},
	}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s := scripted(t, openaitest.Reply{Text: "Let me look.", Calls: calls, Usage: 42})
			m := openai.New(openai.Options{})
			var c chat.Completion
			var err error
			var deltas []string
			if stream {
				c, err = m.Stream(t.Context(), toolRequest(s), func(d string) error { deltas = append(deltas, d); return nil })
			} else {
				c, err = m.Complete(t.Context(), toolRequest(s))
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []chat.ToolCall{{ID: "call_a", Name: "files__list", Arguments: `{"path":"/srv/docs"}`}, {ID: "call_b", Name: "knowledge_search", Arguments: `{"query":"refund policy"}`}}
			if !reflect.DeepEqual(c.ToolCalls, want) || c.Text != "Let me look." || c.TokensUsed == nil || *c.TokensUsed != 42 {
				t.Fatalf("completion = %+v (tokens %v)", c, c.TokensUsed)
			}
			if stream && strings.Join(deltas, "") != "Let me look." {
				t.Errorf("deltas %q", deltas)
			}
			req := s.Requests()[0]
			if got := req.ToolNames(); !reflect.DeepEqual(got, []string{"files__list", "knowledge_search"}) {
				t.Errorf("tools offered %v", got)
			}
			if stream {
				if opts, _ := req["stream_options"].(map[string]any); opts["include_usage"] != true {
					t.Errorf("stream_options = %v, want include_usage", req["stream_options"])
				}
			}
			msgs := req.Messages()
			asked := msgs[2]
			tc, _ := asked["tool_calls"].([]any)
			if asked["role"] != "assistant" || len(tc) != 2 {
				t.Fatalf("assistant message = %v", asked)
			}
			first := tc[0].(map[string]any)
			fn := first["function"].(map[string]any)
			if first["id"] != "old" || first["type"] != "function" || fn["name"] != "files__list" || fn["arguments"] != `{"path":"/"}` {
				t.Errorf("tool call = %v", first)
			}
			if args := tc[1].(map[string]any)["function"].(map[string]any)["arguments"]; args != "{}" {
				t.Errorf("invalid arguments sent back as %v, want {}", args)
			}
			if r := msgs[3]; r["role"] != "tool" || r["tool_call_id"] != "old" || r["content"] != "a.txt" {
				t.Errorf("tool message = %v", r)
			}
		})
	}
}

// TestHostileReplies: a model that sends too much, never stops, cuts its
// stream or does not stream fails as the upstream (502), within bounds.
func TestHostileReplies(t *testing.T) {
	cases := []struct {
		name   string
		reply  openaitest.Reply
		stream bool
		want   string
	}{
		{"huge reply", openaitest.Reply{Hostile: openaitest.Huge, HugeBytes: 200 << 20}, false, "longer than 65536 bytes"},
		{"huge reply under the raw bound", openaitest.Reply{Hostile: openaitest.Huge, HugeBytes: 100 << 10}, false, "longer than 65536 bytes"},
		{"huge tool arguments", openaitest.Reply{Hostile: openaitest.HugeCalls, HugeBytes: 100 << 10}, false, "longer than 65536 bytes"},
		{"huge stream", openaitest.Reply{Hostile: openaitest.Huge, HugeBytes: 10 << 20}, true, "longer than 65536 bytes"},
		{"endless stream", openaitest.Reply{Hostile: openaitest.Endless}, true, "longer than 65536 bytes"},
		{"truncated stream", openaitest.Reply{Hostile: openaitest.Truncated}, true, "ended before the reply was finished"},
		{"not an event stream", openaitest.Reply{Hostile: openaitest.NotSSE}, true, "did not answer with an event stream"},
		{"empty event stream", openaitest.Reply{Hostile: openaitest.EmptySSE}, true, "ended before the reply was finished"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scripted(t, c.reply)
			m := openai.New(openai.Options{})
			req := chat.ModelRequest{Cat: "demo", BaseURL: s.BaseURL(), Model: "m", Timeout: 20 * time.Second, MaxReplyBytes: 64 << 10,
				Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}
			var (
				comp chat.Completion
				err  error
				sent int
			)
			if c.stream {
				comp, err = m.Stream(t.Context(), req, func(d string) error { sent += len(d); return nil })
			} else {
				comp, err = m.Complete(t.Context(), req)
			}
			if !errors.Is(err, chat.ErrUpstreamFailed) || errs.KindOf(err) != errs.KindUnavailable {
				t.Fatalf("err = %v, want an upstream failure", err)
			}
			if msg := errs.PublicMessage(err, ""); !strings.Contains(msg, c.want) {
				t.Errorf("message %q, want %q", msg, c.want)
			}
			if len(comp.Text) > 64<<10 || sent != len(comp.Text) {
				t.Errorf("kept %d bytes, delivered %d: want the same, at most 64 KiB", len(comp.Text), sent)
			}
		})
	}
}
