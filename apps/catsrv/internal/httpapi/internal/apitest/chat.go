package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/docsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"

	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/embedtest"
	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat/agent"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
	"github.com/catsrv/catsrv/ports"
)

// CATs of the chat tests: one per chat mode, and an agent without an
// endpoint.
const (
	LegacyCat = "shop"
	AgentCat  = "bot"
	CustomCat = "mix"
	BareCat   = "bare"
	ChatPath  = chatapi.Prefix
)

// KnowledgeBase is the legacy knowledge base of the chat CATs.
const KnowledgeBase = `entries:
  - id: reset-password
    question: How do I reset my password?
    answer: Use the forgot password link on the sign-in page.
intents:
  - name: billing
    keywords: [invoice, refund]
`

// TickingClock moves a millisecond at every reading, so conversations
// have distinct times in the order they were written.
type TickingClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the next millisecond.
func (c *TickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

// FakeModel is an OpenAI-compatible chat-completions server: "Hello
// there" in one piece, or streamed as "Hel", "lo", " there". status makes
// it fail; hang makes it wait (after the first chunk when streaming) until
// the caller gives up, then report on cancelled.
type FakeModel struct {
	mu        sync.Mutex
	Status    int
	Hang      bool
	Requests  []map[string]any
	Cancelled chan struct{}
}

func (f *FakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.Requests = append(f.Requests, body)
	status, hang := f.Status, f.Hang
	f.mu.Unlock()
	wait := func() {
		<-r.Context().Done()
		close(f.Cancelled)
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

// Last returns the last request the model received.
func (f *FakeModel) Last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Requests[len(f.Requests)-1]
}

// ChatEnv is the whole HTTP app over memory stores, with a fake model.
type ChatEnv struct {
	Srv       *httptest.Server
	Tokens    *tokens.Service
	Sessions  *session.Service
	Log       *memstore.Store
	Files     *memstore.Cats
	Overrides *memstore.CatOverrides
	Model     *FakeModel
	// Scripted is the model of ToolsCat; set its Script per test.
	Scripted *openaitest.Server
	// Tools are ToolsCat's MCP tools.
	Tools *Toolbox
	// Logs receives the app's JSON log.
	Logs  *SyncBuffer
	Convs *memstore.Conversations
	// Recorded are the interactions the chat turns stored, in order.
	Recorded *RecordingLog
	Memory   *prefs.Service
	Auth     *memstore.Auth
	Clock    *TickingClock
	// Metrics holds catsrv_budget_refusals_total.
	Metrics *prometheus.Registry
	Dir     string
	// rateLimit is the auth routes' rate limit (zero: the defaults).
	RateLimit authapi.RateLimit
	// Docs and Retrieval serve the CATs' documents, embedded by
	// Embeddings (every CAT's cat.knowledge.embeddings).
	Docs       *memstore.Documents
	Retrieval  *retrieval.Service
	Embeddings *embedtest.Server

	budgetRefused func(cat, budget string)

	mu sync.Mutex
	h  http.Handler
}

// NewChatEnv serves the whole HTTP app over memory stores and a fake
// model, with a CAT per chat mode; change, when given, changes each CAT's
// configuration.
func NewChatEnv(t testing.TB, change ...func(*catconfig.Cat)) *ChatEnv {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kb.yaml"), []byte(KnowledgeBase), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &ChatEnv{Log: memstore.New(), Overrides: memstore.NewCatOverrides(), Model: &FakeModel{Cancelled: make(chan struct{})}}
	upstream := httptest.NewServer(e.Model)
	t.Cleanup(upstream.Close)
	e.Scripted = openaitest.New(openaitest.Steps(openaitest.Reply{Text: "Hello from the agent."}))
	t.Cleanup(e.Scripted.Close)
	e.Tools, e.Logs = &Toolbox{}, &SyncBuffer{}
	e.Embeddings = embedtest.Start()
	t.Cleanup(e.Embeddings.Close)

	cat := func(name, mode, baseURL string) catconfig.Cat {
		c := catconfig.Defaults(name)
		c.Chat.ChatMode = mode
		c.Chat.Legacy.KnowledgeBase = "kb.yaml"
		c.Chat.Agent.BaseURL, c.Chat.Agent.Model, c.Chat.Agent.Instructions = baseURL, "m-test", "Be brief."
		c.Chat.Agent.TimeoutSeconds = 1
		c.Chat.Custom.Rules = []string{"keyword refund => agent", "context channel=faq => qa"}
		c.Chat.MaxMessageBytes = 64
		c.Chat.Feedback.Reasons = []string{"wrong", "unsafe"}
		c.Chat.Knowledge.Embeddings = catconfig.Embeddings{BaseURL: e.Embeddings.BaseURL(), Model: "m-embed"}
		return c
	}
	tools := cat(ToolsCat, catconfig.ModeAgent, e.Scripted.BaseURL())
	tools.Chat.Agent.TimeoutSeconds, tools.Chat.Agent.ToolTimeoutSeconds, tools.Chat.Agent.ApprovalTimeoutSeconds = 30, 1, 10
	tools.Chat.Agent.MaxSteps = 4
	tools.Chat.Agent.MCPServers = []catconfig.MCPServer{{Name: "files", Command: []string{"files-server"}}, {Name: "crm", URL: "http://127.0.0.1:9/mcp"}}
	tools.Chat.Agent.Tools = []string{"crm/delete_* => ask", "crm/secret_* => deny"}
	all := []catconfig.Cat{cat(LegacyCat, catconfig.ModeLegacy, upstream.URL+"/v1"), cat(AgentCat, catconfig.ModeAgent, upstream.URL+"/v1"),
		cat(CustomCat, catconfig.ModeCustom, upstream.URL+"/v1"), cat(BareCat, catconfig.ModeAgent, ""), tools}
	for i := range all {
		for _, ch := range change {
			ch(&all[i])
		}
	}
	e.Files = memstore.NewCats(all...)
	clk := &TickingClock{now: Now}
	var err error
	if e.Tokens, err = tokens.New([]byte(Secret), "catsrv", "catsrv", clk); err != nil {
		t.Fatal(err)
	}
	authStore := memstore.NewAuth()
	e.Sessions = session.New(session.Deps{Tokens: e.Tokens, Users: authStore, Refresh: authStore, Revocations: authStore,
		Audit: authStore, Cats: e.Files, Clock: clk, RefreshLifetime: time.Hour})
	memory := prefs.New(authStore, prefs.DefaultLimits, clk)
	if _, err := memory.Update(t.Context(), "carol", []byte(`{"preferences":{"persona":"pirate"}}`)); err != nil {
		t.Fatal(err)
	}
	e.Memory, e.Clock, e.Dir, e.Auth = memory, clk, dir, authStore
	e.Recorded = &RecordingLog{InteractionLog: e.Log}
	e.Metrics = prometheus.NewRegistry()
	if e.budgetRefused, err = telemetry.BudgetRefusals(e.Metrics, []string{ToolsCat}); err != nil {
		t.Fatal(err)
	}
	e.Convs = memstore.NewConversations(e.Recorded)
	e.Docs = memstore.NewDocuments()
	if e.Retrieval, err = retrieval.New(retrieval.Deps{Store: e.Docs, Embedder: openai.NewEmbedder(openai.Options{}), Clock: clk}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Retrieval.Close)
	e.Restart(t)
	e.Srv = httptest.NewServer(e)
	t.Cleanup(e.Srv.Close)
	return e
}

// Restart builds the app anew over the same stores, loading the runtime
// configuration as a restarted server would.
func (e *ChatEnv) Restart(t testing.TB) {
	t.Helper()
	cats, err := overlay.Load(t.Context(), e.Files, e.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	kb := knowledge.New(e.Dir)
	svc, err := service.New(service.Deps{Cats: cats, Conversations: e.Convs, Turns: e.Convs, Clock: e.Clock,
		Model: openai.New(openai.Options{}), Knowledge: kb, Documents: e.Retrieval,
		Toolbox: e.Tools, Searcher: agent.KnowledgeBase{Source: kb}, Audit: e.Auth, Feedback: e.Recorded,
		Usage: e.Log, BudgetRefused: e.budgetRefused})
	if err != nil {
		t.Fatal(err)
	}
	erasure := privacy.New(privacy.Deps{
		Users: e.Auth, UserEraser: e.Auth, Refresh: e.Auth, Revocations: e.Auth, Memory: e.Auth, Audit: e.Auth,
		Conversations: e.Convs, Interactions: e.Log, Clock: e.Clock, Store: e.Convs,
	})
	_, h := httpapi.New(httpapi.Deps{
		Tokens: e.Tokens, Logger: slog.New(slog.NewJSONHandler(e.Logs, nil)),
		Reporter: reporter.New(cats, e.Log, e.Log, e.Clock), Browser: e.Log, Ingest: e.Log, Usage: e.Log,
		Auth: &authapi.Deps{Sessions: e.Sessions, Memory: e.Memory, Privacy: erasure, Cats: cats, DefaultCat: LegacyCat,
			Cookies: authapi.CookiePolicy{SameSite: http.SameSiteLaxMode}, AllowedOrigins: []string{AllowedOrigin},
			RateLimit: e.RateLimit},
		Chat: &chatapi.Deps{Service: svc, Config: cats, Memory: e.Memory, DefaultCat: LegacyCat,
			AgentKeySet: func(cat string) bool { return cat == AgentCat }},
		Documents: &docsapi.Deps{Documents: e.Retrieval, Cats: cats, DefaultCat: LegacyCat},
	})
	e.mu.Lock()
	e.h = h
	e.mu.Unlock()
}

func (e *ChatEnv) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	h := e.h
	e.mu.Unlock()
	h.ServeHTTP(w, r)
}

// Token is a bearer header for a user.
func (e *ChatEnv) Token(t testing.TB, user, role string) string {
	t.Helper()
	tok, _, err := e.Tokens.Issue(user, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok
}

// RecordingLog is an interaction log that keeps a copy of what it stored.
type RecordingLog struct {
	ports.InteractionLog
	mu  sync.Mutex
	all []analytics.Interaction
}

// Append stores the interactions and keeps them when they were stored.
func (l *RecordingLog) Append(ctx context.Context, seq iter.Seq2[analytics.Interaction, error]) (int, error) {
	var batch []analytics.Interaction
	for i, err := range seq {
		if err != nil {
			return 0, err
		}
		batch = append(batch, i)
	}
	n, err := l.InteractionLog.Append(ctx, analytics.Each(batch))
	if err == nil {
		l.mu.Lock()
		l.all = append(l.all, batch...)
		l.mu.Unlock()
	}
	return n, err
}

// All returns the interactions stored so far.
func (l *RecordingLog) All() []analytics.Interaction {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// SetFeedback sets the feedback in the log (the memory store's own
// ports.FeedbackRecorder) and, once stored, in the kept copy.
func (l *RecordingLog) SetFeedback(ctx context.Context, cat, id string, f analytics.Feedback) error {
	if err := l.InteractionLog.(ports.FeedbackRecorder).SetFeedback(ctx, cat, id, f); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.all {
		if l.all[i].Cat == cat && l.all[i].InteractionID == id {
			l.all[i].Feedback = f
			return nil
		}
	}
	return errs.New(errs.KindNotFound, "interaction %q not found", id)
}
