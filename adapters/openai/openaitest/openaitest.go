// Package openaitest is a scripted OpenAI-compatible chat-completions
// server for tests and benchmarks: each request gets the reply a script
// gives, as one JSON answer or as server-sent events the way real
// servers send them (text in small pieces, each tool call's arguments
// split across chunks, a finish chunk, a usage chunk when asked, [DONE]),
// or a hostile answer (huge, endless, cut, not an event stream).
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Call is a tool call a scripted reply makes.
type Call struct {
	ID, Name, Arguments string
}

// Hostile answers a well-behaved server never gives.
const (
	Huge      = "huge"       // a reply of HugeBytes of text
	Endless   = "endless"    // a stream that never ends (until the client leaves)
	Truncated = "truncated"  // a stream cut after some text: no finish, no [DONE]
	NotSSE    = "not-sse"    // a stream request answered with JSON, status 200
	EmptySSE  = "empty-sse"  // an event stream with no events at all
	HugeCalls = "huge-calls" // a tool call whose arguments are HugeBytes long
)

// Reply is what the server answers one request.
type Reply struct {
	Text  string
	Calls []Call
	// Usage is the total tokens reported; 0 reports none.
	Usage int
	// Status, when not 0 or 200, fails the request with it.
	Status int
	// Hostile is one of the hostile answers.
	Hostile string
	// HugeBytes sizes Huge and HugeCalls (default 1 MiB).
	HugeBytes int
	// Delay is slept before answering.
	Delay time.Duration
}

// Request is a request the server received, decoded.
type Request map[string]any

// Messages are the request's messages.
func (r Request) Messages() []map[string]any {
	raw, _ := r["messages"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, m := range raw {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// ToolNames are the names of the tools the request offers.
func (r Request) ToolNames() []string {
	raw, _ := r["tools"].([]any)
	var out []string
	for _, t := range raw {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		out = append(out, name)
	}
	return out
}

// Server is the scripted server. Script gives the reply of the n-th
// request (from 0); Requests keeps every request.
type Server struct {
	*httptest.Server
	Script func(n int, req Request) Reply

	mu       sync.Mutex
	requests []Request
}

// New starts a server with script; close it with Close.
func New(script func(n int, req Request) Reply) *Server {
	s := &Server{Script: script}
	s.Server = httptest.NewServer(s)
	return s
}

// Steps is a script answering the replies in order, the last one again
// for every later request.
func Steps(replies ...Reply) func(int, Request) Reply {
	return func(n int, _ Request) Reply { return replies[min(n, len(replies)-1)] }
}

// BaseURL is the URL to configure as cat.agent.base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	reply := s.Script(n, req)
	if reply.Delay > 0 {
		time.Sleep(reply.Delay)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprint(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
		return
	}
	if reply.HugeBytes == 0 {
		reply.HugeBytes = 1 << 20
	}
	model, _ := req["model"].(string)
	stream, _ := req["stream"].(bool)
	switch {
	case stream && reply.Hostile == NotSSE:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completion(model, Reply{Text: "not a stream"}))
	case stream:
		s.stream(w, r, model, req, reply)
	case reply.Hostile == Huge:
		// Written as it goes, so a huge reply costs this server nothing.
		w.Header().Set("Content-Type", "application/json")
		whole := completion(model, Reply{Text: "@"})
		head, tail, _ := strings.Cut(whole, "@")
		fmt.Fprint(w, head)
		piece := strings.Repeat("x", 64<<10)
		for sent := 0; sent < reply.HugeBytes; sent += len(piece) {
			if _, err := fmt.Fprint(w, piece); err != nil {
				return
			}
		}
		fmt.Fprint(w, tail)
	case reply.Hostile == HugeCalls:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completion(model, Reply{Calls: []Call{{ID: "c", Name: "knowledge_search", Arguments: `{"query":"` + strings.Repeat("x", reply.HugeBytes) + `"}`}}}))
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completion(model, reply))
	}
}

// completion is a whole chat.completion answer.
func completion(model string, r Reply) string {
	msg := map[string]any{"role": "assistant", "content": r.Text}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
		var calls []map[string]any
		for _, c := range r.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id": "cmpl-1", "object": "chat.completion", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if r.Usage > 0 {
		out["usage"] = map[string]any{"prompt_tokens": r.Usage / 2, "completion_tokens": r.Usage - r.Usage/2, "total_tokens": r.Usage}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// stream writes the reply as chat.completion.chunk events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	if reply.Hostile == EmptySSE {
		return
	}
	flusher, _ := w.(http.Flusher)
	send := func(choice map[string]any, usage map[string]any) bool {
		chunk := map[string]any{"id": "cmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": []any{}}
		if choice != nil {
			chunk["choices"] = []any{choice}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	delta := func(d map[string]any) map[string]any { return map[string]any{"index": 0, "delta": d} }
	switch reply.Hostile {
	case Endless:
		piece := strings.Repeat("and on ", 100)
		for send(delta(map[string]any{"content": piece}), nil) {
		}
		return
	case Huge:
		piece := strings.Repeat("x", 4096)
		for sent := 0; sent < reply.HugeBytes; sent += len(piece) {
			if !send(delta(map[string]any{"content": piece}), nil) {
				return
			}
		}
	case Truncated:
		send(delta(map[string]any{"role": "assistant", "content": "The answer is"}), nil)
		return
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}), nil)
	for text := reply.Text; text != ""; {
		n := min(len(text), 24)
		if !send(delta(map[string]any{"content": text[:n]}), nil) {
			return
		}
		text = text[n:]
	}
	// Each call: a first chunk with the id, the name and half the
	// arguments, then a chunk with the rest, as servers split them.
	for i, c := range reply.Calls {
		half := len(c.Arguments) / 2
		send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments[:half]}}}}), nil)
		send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.Arguments[half:]}}}}), nil)
	}
	finish := "stop"
	if len(reply.Calls) > 0 {
		finish = "tool_calls"
	}
	send(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}, nil)
	if opts, _ := req["stream_options"].(map[string]any); opts["include_usage"] == true && reply.Usage > 0 {
		send(nil, map[string]any{"prompt_tokens": reply.Usage / 2, "completion_tokens": reply.Usage - reply.Usage/2, "total_tokens": reply.Usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
