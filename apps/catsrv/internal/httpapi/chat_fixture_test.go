package httpapi_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/adapters/chatmodel/openai"
	"github.com/catsrv/catsrv/adapters/knowledge"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat/service"
)

// CATs of the chat tests: one per chat mode, and an agent without an
// endpoint.
const (
	legacyCat = "shop"
	agentCat  = "bot"
	customCat = "mix"
	bareCat   = "bare"
	chatPath  = chatapi.Prefix
)

const knowledgeBase = `entries:
  - id: reset-password
    question: How do I reset my password?
    answer: Use the forgot password link on the sign-in page.
intents:
  - name: billing
    keywords: [invoice, refund]
`

// tickingClock moves a millisecond at every reading, so conversations
// have distinct times in the order they were written.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// fakeModel is an OpenAI-compatible chat-completions server: "Hello
// there" in one piece, or streamed as "Hel", "lo", " there". status makes
// it fail; hang makes it wait (after the first chunk when streaming) until
// the caller gives up, then report on cancelled.
type fakeModel struct {
	mu        sync.Mutex
	status    int
	hang      bool
	requests  []map[string]any
	cancelled chan struct{}
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, body)
	status, hang := f.status, f.hang
	f.mu.Unlock()
	wait := func() {
		<-r.Context().Done()
		close(f.cancelled)
	}
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"upstream secret detail","type":"x"}}`)
		return
	}
	if body["stream"] != true {
		if hang {
			wait()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, body["model"])
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, piece := range []string{"Hel", "lo", " there"} {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", body["model"], piece)
		w.(http.Flusher).Flush()
		if hang && i == 0 {
			wait()
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (f *fakeModel) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

// chatEnv is the whole HTTP app over memory stores, with a fake model.
type chatEnv struct {
	srv       *httptest.Server
	tokens    *tokens.Service
	sessions  *session.Service
	log       *memstore.Store
	files     *memstore.Cats
	overrides *memstore.CatOverrides
	model     *fakeModel
	convs     *memstore.Conversations
	memory    *prefs.Service
	clock     *tickingClock
	dir       string
	// rateLimit is the auth routes' rate limit (zero: the defaults).
	rateLimit authapi.RateLimit

	mu sync.Mutex
	h  http.Handler
}

func newChatEnv(t *testing.T) *chatEnv {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kb.yaml"), []byte(knowledgeBase), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &chatEnv{log: memstore.New(), overrides: memstore.NewCatOverrides(), model: &fakeModel{cancelled: make(chan struct{})}}
	upstream := httptest.NewServer(e.model)
	t.Cleanup(upstream.Close)

	cat := func(name, mode, baseURL string) catconfig.Cat {
		c := catconfig.Defaults(name)
		c.Chat.ChatMode = mode
		c.Chat.Legacy.KnowledgeBase = "kb.yaml"
		c.Chat.Agent.BaseURL, c.Chat.Agent.Model, c.Chat.Agent.Instructions = baseURL, "m-test", "Be brief."
		c.Chat.Agent.TimeoutSeconds = 1
		c.Chat.Custom.Rules = []string{"keyword refund => agent", "context channel=faq => qa"}
		c.Chat.MaxMessageBytes = 64
		return c
	}
	e.files = memstore.NewCats(cat(legacyCat, catconfig.ModeLegacy, upstream.URL+"/v1"), cat(agentCat, catconfig.ModeAgent, upstream.URL+"/v1"),
		cat(customCat, catconfig.ModeCustom, upstream.URL+"/v1"), cat(bareCat, catconfig.ModeAgent, ""))
	clk := &tickingClock{now: now}
	var err error
	if e.tokens, err = tokens.New([]byte(testSecret), "catsrv", "catsrv", clk); err != nil {
		t.Fatal(err)
	}
	authStore := memstore.NewAuth()
	e.sessions = session.New(session.Deps{Tokens: e.tokens, Users: authStore, Refresh: authStore, Revocations: authStore,
		Audit: authStore, Cats: e.files, Clock: clk, RefreshLifetime: time.Hour})
	memory := prefs.New(authStore, prefs.DefaultLimits, clk)
	if _, err := memory.Update(t.Context(), "carol", []byte(`{"preferences":{"persona":"pirate"}}`)); err != nil {
		t.Fatal(err)
	}
	e.memory, e.clock, e.dir = memory, clk, dir
	e.convs = memstore.NewConversations(e.log)
	e.restart(t)
	e.srv = httptest.NewServer(e)
	t.Cleanup(e.srv.Close)
	return e
}

// restart builds the app anew over the same stores, loading the runtime
// configuration as a restarted server would.
func (e *chatEnv) restart(t *testing.T) {
	t.Helper()
	cats, err := overlay.Load(t.Context(), e.files, e.overrides)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Deps{Cats: cats, Conversations: e.convs, Turns: e.convs, Clock: e.clock,
		Model: openai.New(openai.Options{}), Knowledge: knowledge.New(e.dir)})
	if err != nil {
		t.Fatal(err)
	}
	_, h := httpapi.New(httpapi.Deps{
		Tokens: e.tokens, Logger: slog.New(slog.DiscardHandler),
		Reporter: reporter.New(cats, e.log, e.log, e.clock),
		Auth: &authapi.Deps{Sessions: e.sessions, Memory: e.memory, Cats: cats, DefaultCat: legacyCat,
			Cookies: authapi.CookiePolicy{SameSite: http.SameSiteLaxMode}, AllowedOrigins: []string{allowedOrigin},
			RateLimit: e.rateLimit},
		Chat: &chatapi.Deps{Service: svc, Config: cats, Memory: e.memory, DefaultCat: legacyCat,
			AgentKeySet: func(cat string) bool { return cat == agentCat }},
	})
	e.mu.Lock()
	e.h = h
	e.mu.Unlock()
}

func (e *chatEnv) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	h := e.h
	e.mu.Unlock()
	h.ServeHTTP(w, r)
}

// token is a bearer header for a user.
func (e *chatEnv) token(t *testing.T, user, role string) string {
	t.Helper()
	tok, _, err := e.tokens.Issue(user, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok
}
