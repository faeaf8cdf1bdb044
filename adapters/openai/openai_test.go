package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// fakeServer is an OpenAI-compatible chat-completions endpoint. It
// answers "Hello there" in one piece, or as SSE chunks "Hel", "lo", " there"
// when asked to stream, unless status is set.
type fakeServer struct {
	t      *testing.T
	status int
	// hang makes the server wait for the client to give up, after sending
	// the first chunk when streaming.
	hang   bool
	bodies []map[string]any
	auth   []string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.t.Errorf("request body: %v", err)
	}
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if f.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"error":{"message":"upstream secret detail","type":"x","code":"y"}}`)
		return
	}
	if body["stream"] != true {
		if f.hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m-2026",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, piece := range []string{"Hel", "lo", " there"} {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m-2026\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
		w.(http.Flusher).Flush()
		if f.hang && i == 0 {
			<-r.Context().Done()
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func setup(t *testing.T, f *fakeServer) (*openai.Model, chat.ModelRequest) {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m := openai.New(openai.Options{APIKey: func(cat string) string { return "key-" + cat }, HTTPClient: srv.Client()})
	return m, chat.ModelRequest{
		Cat: "demo", BaseURL: srv.URL + "/v1", Model: "m", Temperature: 0.25, MaxTokens: 99, Timeout: 10 * time.Second,
		Messages: []chat.Message{{Role: chat.RoleSystem, Content: "Be brief."}, {Role: chat.RoleUser, Content: "hi"}, {Role: chat.RoleAssistant, Content: "yo"}, {Role: chat.RoleUser, Content: "again"}},
	}
}

func TestCompleteSendsTheRequest(t *testing.T) {
	f := &fakeServer{}
	m, req := setup(t, f)
	c, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "Hello there" || c.Model != "m-2026" || c.TokensUsed == nil || *c.TokensUsed != 5 {
		t.Fatalf("completion = %+v", c)
	}
	body := f.bodies[0]
	if body["model"] != "m" || body["temperature"] != 0.25 || body["max_tokens"] != float64(99) || f.auth[0] != "Bearer key-demo" {
		t.Fatalf("request = %v, auth %q", body, f.auth[0])
	}
	var roles []string
	for _, msg := range body["messages"].([]any) {
		m := msg.(map[string]any)
		roles = append(roles, fmt.Sprint(m["role"], ":", m["content"]))
	}
	if want := []string{"system:Be brief.", "user:hi", "assistant:yo", "user:again"}; !slices.Equal(roles, want) {
		t.Fatalf("messages = %v, want %v", roles, want)
	}
}

func TestStreamDeliversChunks(t *testing.T) {
	cases := []struct {
		name        string
		noStreaming bool
		want        []string
	}{
		{"server-sent events", false, []string{"Hel", "lo", " there"}},
		{"model that cannot stream gives one delta", true, []string{"Hello there"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeServer{}
			_, req := setup(t, f)
			m := openai.New(openai.Options{NoStreaming: c.noStreaming})
			var got []string
			comp, err := m.Stream(t.Context(), req, func(d string) error { got = append(got, d); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) || comp.Text != "Hello there" || comp.Model != "m-2026" {
				t.Fatalf("deltas %q, completion %+v", got, comp)
			}
			if stream := f.bodies[0]["stream"] == true; stream == c.noStreaming {
				t.Fatalf("stream flag sent = %v", stream)
			}
		})
	}
}

func TestUpstreamErrors(t *testing.T) {
	cases := []struct {
		status int
		want   string
		kind   errs.Kind
	}{
		{http.StatusUnauthorized, "refused the credentials (HTTP 401)", errs.KindUnavailable},
		{http.StatusNotFound, "HTTP 404", errs.KindUnavailable},
		{http.StatusTooManyRequests, "rate limiting (HTTP 429)", errs.KindRateLimited},
		{http.StatusInternalServerError, "failed (HTTP 500)", errs.KindUnavailable},
		{http.StatusBadRequest, "rejected the request (HTTP 400)", errs.KindUnavailable},
	}
	for _, c := range cases {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d stream %v", c.status, streaming), func(t *testing.T) {
				m, req := setup(t, &fakeServer{status: c.status})
				var err error
				if streaming {
					_, err = m.Stream(t.Context(), req, func(string) error { return nil })
				} else {
					_, err = m.Complete(t.Context(), req)
				}
				msg := errs.PublicMessage(err, "")
				if errs.KindOf(err) != c.kind || !errors.Is(err, chat.ErrUpstreamFailed) || !strings.Contains(msg, c.want) {
					t.Fatalf("err = %v (public %q), want %v, upstream failed, %q", err, msg, c.kind, c.want)
				}
				if strings.Contains(msg, "secret detail") {
					t.Fatalf("public message leaks the upstream body: %q", msg)
				}
			})
		}
	}
}

func TestTimeout(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream %v", streaming), func(t *testing.T) {
			m, req := setup(t, &fakeServer{hang: true})
			req.Timeout = 50 * time.Millisecond
			var err error
			var comp chat.Completion
			if streaming {
				comp, err = m.Stream(t.Context(), req, func(string) error { return nil })
			} else {
				_, err = m.Complete(t.Context(), req)
			}
			if errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, chat.ErrUpstreamTimeout) || !strings.Contains(errs.PublicMessage(err, ""), "did not answer within 50ms") {
				t.Fatalf("err = %v, want a time-out", err)
			}
			if streaming && comp.Text != "Hel" {
				t.Fatalf("partial text = %q, want what arrived", comp.Text)
			}
		})
	}
}

func TestCallerCancelMidStream(t *testing.T) {
	m, req := setup(t, &fakeServer{hang: true})
	ctx, cancel := context.WithCancel(t.Context())
	comp, err := m.Stream(ctx, req, func(string) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) || errs.KindOf(err) == errs.KindUnavailable {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	if comp.Text != "Hel" {
		t.Fatalf("partial = %q", comp.Text)
	}
}

func TestUnreachableAndUnconfigured(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m := openai.New(openai.Options{})
	_, err := m.Complete(t.Context(), chat.ModelRequest{BaseURL: url, Model: "m", Timeout: time.Second})
	if !errors.Is(err, chat.ErrUpstreamFailed) || !strings.Contains(errs.PublicMessage(err, ""), "unreachable") {
		t.Fatalf("closed server: %v", err)
	}
	_, err = m.Stream(t.Context(), chat.ModelRequest{Model: "m"}, func(string) error { return nil })
	if errs.KindOf(err) != errs.KindUnavailable || !strings.Contains(errs.PublicMessage(err, ""), "no model endpoint configured") {
		t.Fatalf("no base URL: %v", err)
	}
}
