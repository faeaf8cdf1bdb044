package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/web"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat/service"
)

// chatSite is the whole app (analytics, chat, auth with erasure) on
// SQLite, with users' tokens.
type chatSite struct {
	url               string
	admin, ann, bruno string
}

func newChatSite(t *testing.T) *chatSite {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	ctx := t.Context()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	records, err := authsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	chats, err := chatsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	cats, err := overlay.Load(ctx, memstore.NewCats(catconfig.Defaults("demo")), chats)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.System{}
	toks, err := tokens.New([]byte(secret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Deps{Cats: cats, Conversations: chats, Turns: chats, Clock: clk,
		Model: openai.New(openai.Options{}), Knowledge: knowledge.New(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	memory := prefs.New(records, prefs.DefaultLimits, clk)
	_, h := httpapi.New(httpapi.Deps{
		Reporter: reporter.New(cats, store, store.Rollups(), clk), Tokens: toks, Logger: slog.New(slog.DiscardHandler),
		Browser: store, Dashboard: web.Assets(),
		Auth: &authapi.Deps{
			Sessions: session.New(session.Deps{Tokens: toks, Users: records, Refresh: records, Revocations: records,
				Audit: records, Cats: cats, Clock: clk}),
			Memory: memory, Cats: cats, DefaultCat: "demo",
			Privacy: privacy.New(privacy.Deps{Users: records, UserEraser: records, Refresh: records, Revocations: records,
				Memory: records, Audit: records, Conversations: chats, Interactions: store, Clock: clk, Store: chats}),
		},
		Chat: &chatapi.Deps{Service: svc, Config: cats, Memory: memory, DefaultCat: "demo", AgentKeySet: func(string) bool { return false }},
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &chatSite{url: srv.URL}
	for _, who := range []struct {
		to        *string
		sub, role string
	}{{&s.admin, "e2e-admin", "admin"}, {&s.ann, "ann", "user"}, {&s.bruno, "bruno", "user"}} {
		if *who.to, _, err = toks.Issue(who.sub, who.role, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// call sends a request with a bearer token and returns the status and body.
func (s *chatSite) call(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// chatOnce starts a conversation and returns its id.
func (s *chatSite) chatOnce(t *testing.T, token, message string) string {
	t.Helper()
	status, body := s.call(t, http.MethodPost, "/api/v1/cat/chat", token, map[string]any{"message": message})
	var r struct {
		ConversationID string `json:"conversation_id"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &r) != nil || r.ConversationID == "" {
		t.Fatalf("chat: %d %s", status, body)
	}
	return r.ConversationID
}

// logUsers is the user column of the chat log's rows.
const logUsers = `Array.from(document.querySelectorAll('#chatlog tbody tr')).map((r) => r.cells.length > 6 ? r.cells[6].textContent : '')`

// TestChatLogDeletesAndErases clicks through the chat log's two
// deletions, each confirmed: a conversation of bruno's (gone for bruno,
// his other one kept), then the user ann (her rows leave the log, her
// data the server; bruno's rows stay).
func TestChatLogDeletesAndErases(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newChatSite(t)
	annConv := s.chatOnce(t, s.ann, "hello from ann")
	brunoKeep := s.chatOnce(t, s.bruno, "hello from bruno")
	brunoGone := s.chatOnce(t, s.bruno, "another question from bruno")

	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open the page", chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	run(ctx, t, "sign in",
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	run(ctx, t, "wait for the chat log",
		chromedp.Poll[chromedp.Void](`document.body.dataset.state === 'ready' && document.querySelectorAll('#chatlog tbody button[data-action]:not([data-action="thread"])').length === 6`,
			chromedp.WithPollingTimeout(30*time.Second)))

	deleteButton := `#chatlog tbody button[data-action="delete-conversation"][data-conversation="` + brunoGone + `"]`
	run(ctx, t, "ask to delete bruno's conversation", chromedp.Click(chromedp.CSS(deleteButton)), chromedp.WaitVisible(chromedp.ID("confirm")))
	text := value(ctx, t, "read the confirmation", chromedp.Text(chromedp.ID("confirm-text")))
	if !strings.Contains(text, brunoGone) || !strings.Contains(text, "bruno") {
		t.Fatalf("confirmation %q does not name the conversation", text)
	}
	run(ctx, t, "cancel", chromedp.Click(chromedp.ID("confirm-no")), chromedp.WaitNotVisible(chromedp.ID("confirm")))
	if status, body := s.call(t, http.MethodGet, "/api/v1/cat/conversations/"+brunoGone, s.bruno, nil); status != http.StatusOK {
		t.Fatalf("a cancelled deletion deleted: %d %s", status, body)
	}
	run(ctx, t, "delete bruno's conversation",
		chromedp.Click(chromedp.CSS(deleteButton)), chromedp.WaitVisible(chromedp.ID("confirm")),
		chromedp.Click(chromedp.ID("confirm-yes")),
		chromedp.Poll[chromedp.Void](`document.getElementById('status').textContent.startsWith('Deleted conversation')`, chromedp.WithPollingTimeout(30*time.Second)))
	shot(ctx, t, out, "manage-1-deleted.png")
	if status, _ := s.call(t, http.MethodGet, "/api/v1/cat/conversations/"+brunoGone, s.bruno, nil); status != http.StatusNotFound {
		t.Fatalf("bruno's deleted conversation answers %d", status)
	}
	if status, _ := s.call(t, http.MethodGet, "/api/v1/cat/conversations/"+brunoKeep, s.bruno, nil); status != http.StatusOK {
		t.Fatalf("bruno's other conversation answers %d", status)
	}

	run(ctx, t, "erase ann",
		chromedp.Click(chromedp.CSS(`#chatlog tbody button[data-action="erase-user"][data-user="ann"]`)),
		chromedp.WaitVisible(chromedp.ID("confirm")),
		chromedp.Click(chromedp.ID("confirm-yes")),
		chromedp.Poll[chromedp.Void](`document.getElementById('status').textContent.startsWith('Erased user ann')`, chromedp.WithPollingTimeout(30*time.Second)))
	shot(ctx, t, out, "manage-2-erased.png")
	users := value(ctx, t, "read the log's users", chromedp.Evaluate[[]string](logUsers))
	if strings.Join(users, ",") != "bruno,bruno" {
		t.Fatalf("chat log users after erasing ann: %v, want bruno's two rows", users)
	}
	if status, _ := s.call(t, http.MethodGet, "/api/v1/cat/conversations/"+annConv, s.ann, nil); status != http.StatusNotFound {
		t.Fatalf("ann's conversation after erasure answers %d", status)
	}
	var interactions struct {
		Interactions []struct {
			UserID string `json:"user_id"`
		} `json:"interactions"`
	}
	start := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	end := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	status, body := s.call(t, http.MethodGet, "/api/v1/analytics/interactions?catname=demo&start_date="+start+"&end_date="+end, s.admin, nil)
	if status != http.StatusOK || json.Unmarshal(body, &interactions) != nil || len(interactions.Interactions) != 2 {
		t.Fatalf("interactions after erasure: %d %s", status, body)
	}
	for _, i := range interactions.Interactions {
		if i.UserID != "bruno" {
			t.Fatalf("interactions after erasure: %s", body)
		}
	}
}
