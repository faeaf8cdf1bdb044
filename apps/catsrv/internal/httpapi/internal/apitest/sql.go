package apitest

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/oauth"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/ports"
)

// SQLEnv is the whole HTTP app as serve wires it, over a real SQL store
// (SQLite or PostgreSQL): analytics, interactions, chat, conversations,
// logins (provider_a against a fake identity provider), memory and the
// audit log all reach the database. Requests go straight to the handler,
// so they may carry bytes a real HTTP server would refuse (a NUL in a
// header), and the JSON log is kept to check for ERROR lines.
type SQLEnv struct {
	Name    string
	Handler http.Handler
	Logs    *SyncBuffer
	Tokens  *tokens.Service
	IDP     *FakeIDP
	// User is a bearer header of the user who owns conv.
	User string
	// Admin is a bearer header of an admin.
	Admin string
	// Conv is a conversation of User in LegacyCat.
	Conv string
	// audit is the audit log the app writes.
	Audit ports.AuditLog
	// Records is the auth store, Store the interaction log.
	Records *authsql.Store
	Store   *sqlstore.Store
}

// ChatComponent and AuthComponent are the chat and auth schemas, for
// sqltest.Open to bring up to date (or find so in a pooled schema).
var (
	ChatComponent = sqltest.Component{Name: chatsql.Component, Migrate: func(ctx context.Context, s *sqlstore.Store) error {
		_, err := chatsql.Open(ctx, s)
		return err
	}}
	AuthComponent = sqltest.Component{Name: authsql.Component, Migrate: func(ctx context.Context, s *sqlstore.Store) error {
		_, err := authsql.Open(ctx, s)
		return err
	}}
)

// NewSQLEnv builds the app over a fresh database of the backend.
func NewSQLEnv(t testing.TB, b sqltest.Backend) *SQLEnv {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kb.yaml"), []byte(KnowledgeBase), 0o600); err != nil {
		t.Fatal(err)
	}
	store := sqltest.Open(t, b.DSN(t), ChatComponent, AuthComponent)
	chats, err := chatsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	records, err := authsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	shop := catconfig.Defaults(LegacyCat)
	shop.Chat.ChatMode = catconfig.ModeLegacy
	shop.Chat.Legacy.KnowledgeBase = "kb.yaml"
	shop.Security.Providers.ProviderA.Enabled = true
	files := memstore.NewCats(shop, catconfig.Defaults(PrivateCat))
	cats, err := overlay.Load(ctx, files, chats)
	if err != nil {
		t.Fatal(err)
	}
	clk := &TickingClock{now: Now}
	tok, err := tokens.New([]byte(Secret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Deps{Cats: cats, Conversations: chats, Turns: chats, Clock: clk,
		Model: openai.New(openai.Options{}), Knowledge: knowledge.New(dir), Feedback: store, Usage: store})
	if err != nil {
		t.Fatal(err)
	}
	e := &SQLEnv{Name: b.Name, Logs: &SyncBuffer{}, Tokens: tok, Audit: records}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.Handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	e.IDP = NewFakeIDP(t, auth.ProviderA, IDPUser{"a-123", "ann@a.example", "Ann A"})
	provider, err := oauth.NewProviderA(oauth.Config{ClientID: e.IDP.ClientID, ClientSecret: e.IDP.Secret,
		RedirectURL: srv.URL + AuthPrefix + "/" + auth.ProviderA + "/callback", BaseURL: e.IDP.Srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	memory := prefs.New(records, prefs.DefaultLimits, clk)
	e.Records, e.Store = records, store
	authDeps := &authapi.Deps{
		Privacy: privacy.New(privacy.Deps{Users: records, UserEraser: records, Refresh: records, Revocations: records,
			Memory: records, Audit: records, Conversations: chats, Interactions: store, Clock: clk, Store: chats}),
		Sessions: session.New(session.Deps{Tokens: tok, Users: records, Refresh: records, Revocations: records,
			Audit: records, Cats: cats, Clock: clk, RefreshLifetime: 24 * time.Hour}),
		States:         session.NewStateSealer([]byte(Secret), clk),
		Memory:         memory,
		Cats:           cats,
		Providers:      map[string]ports.IdentityProvider{auth.ProviderA: provider},
		DefaultCat:     LegacyCat,
		Cookies:        authapi.CookiePolicy{SameSite: http.SameSiteLaxMode},
		AllowedOrigins: []string{AllowedOrigin},
	}
	_, e.Handler = httpapi.New(httpapi.Deps{
		Tokens: tok, Logger: slog.New(slog.NewJSONHandler(e.Logs, nil)),
		Reporter: reporter.New(cats, store, store.Rollups(), clk),
		Browser:  store,
		Usage:    store,
		Ingest:   store,
		Auth:     authDeps,
		Chat: &chatapi.Deps{Service: svc, Config: cats, Memory: memory, DefaultCat: LegacyCat,
			AgentKeySet: func(string) bool { return false }},
	})
	if _, err := store.Append(ctx, analytics.Each(SampleLog())); err != nil {
		t.Fatal(err)
	}
	e.User, e.Admin = e.Bearer(t, "alice", "user"), e.Bearer(t, "root", "admin")
	r := e.Do(t, http.MethodPost, ChatPath+"/chat", e.User, `{"message":"how do I reset my password"}`)
	var c chatapi.ChatResponse
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &c) != nil || c.ConversationID == "" {
		t.Fatalf("first chat: %d %s", r.Status, r.Body)
	}
	e.Conv = c.ConversationID
	return e
}

// Bearer is the Authorization header of a token of user with role.
func (e *SQLEnv) Bearer(t testing.TB, user, role string) string {
	t.Helper()
	tok, _, err := e.Tokens.Issue(user, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok
}

// Do serves one request; headers are "Name: value" pairs.
func (e *SQLEnv) Do(t testing.TB, method, target, auth, body string, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	// The path must be escaped (a server reads nothing else); the query
	// is taken raw, whatever its bytes, as the handler's parsers get it.
	path, query, _ := strings.Cut(target, "?")
	u, err := url.Parse(path)
	if err != nil {
		t.Fatalf("bad test path %q: %v", path, err)
	}
	u.RawQuery = query
	req := httptest.NewRequest(method, "https://catsrv.test/", rd)
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
	req.RequestURI = target
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(DeadlineRecorder{rec}, req)
	res := rec.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// DeadlineRecorder is a recorder with the write deadline of a real
// connection, which huma's event streams set before each event.
type DeadlineRecorder struct{ *httptest.ResponseRecorder }

// SetWriteDeadline does nothing: a recorder cannot block.
func (DeadlineRecorder) SetWriteDeadline(time.Time) error { return nil }

// Take returns what was written and empties the buffer, so that a long
// fuzzing run does not hold every line it ever logged.
func (b *SyncBuffer) Take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// ErrorLines returns the log lines at ERROR level (and any line that is
// not JSON) written since the previous call.
func (e *SQLEnv) ErrorLines() []string {
	var out []string
	for line := range strings.Lines(e.Logs.Take()) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["level"] == slog.LevelError.String() {
			out = append(out, line)
		}
	}
	return out
}

// SQLBackends are the back ends a test of odd input runs on: SQLite
// always; PostgreSQL when CATSRV_TEST_POSTGRES_DSN is set (and, as for
// every PostgreSQL test, required under CI=true), but never while
// fuzzing, where the engine's throughput matters and one database is
// enough.
func SQLBackends() []sqltest.Backend {
	all := sqltest.Backends()
	out := all[:1]
	if Fuzzing() {
		return out
	}
	if os.Getenv(sqltest.PostgresEnv) != "" || os.Getenv("CI") == "true" {
		out = append(out, all[1])
	}
	return out
}

// Fuzzing reports whether this run is generating fuzz inputs (go test
// -fuzz), as opposed to running the seed corpus as ordinary tests.
func Fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}
