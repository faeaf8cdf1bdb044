package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// TestEraseCommand erases an account by <provider>:<subject> from a
// SQLite database with two users' data, in the real binary: the account,
// memory, tokens, conversation and interactions go, the other user's stay,
// the audit log names no one; a second run finds no account (exit 1).
func TestEraseCommand(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	ctx := t.Context()
	at := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	store, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	records, err := authsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	chats, err := chatsql.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, sub := range []string{"1234", "5678"} {
		u, err := records.UpsertUser(ctx, auth.Identity{Provider: auth.ProviderB, Subject: sub, Email: sub + "@x", Name: "N" + sub}, at)
		if err != nil {
			t.Fatal(err)
		}
		ids[sub] = u.ID
		if _, err := records.UpdateMemory(ctx, u.ID, func(auth.Memory) (auth.Memory, error) {
			return auth.Memory{Preferences: map[string]json.RawMessage{"lang": json.RawMessage(`"fr"`)}, UpdatedAt: at}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := records.SaveRefresh(ctx, auth.RefreshToken{Hash: "h" + sub, Family: "f" + sub, UserID: u.ID, Cat: "demo", IssuedAt: at, FamilyExpiresAt: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		in := analytics.Interaction{Time: at, Cat: "demo", EventKind: analytics.EventKindAPI, Question: "q", Answer: "a",
			Topic: "t", Model: "m", Persona: "p", UserID: u.ID, ConversationID: "c" + sub}
		owner := chat.Owner{Cat: "demo", UserID: u.ID}
		if err := chats.RecordTurn(ctx, chat.Turn{New: true, Interaction: &in,
			Conversation: chat.Conversation{ID: "c" + sub, Owner: owner, Name: "hello", CreatedAt: at, UpdatedAt: at},
			Messages:     []chat.Message{{Role: chat.RoleUser, Content: "q", Time: at}, {Role: chat.RoleAssistant, Content: "a", Time: at}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(ctx, analytics.Each([]analytics.Interaction{{Time: at.Add(time.Minute), Cat: "other", EventKind: analytics.EventKindAPI,
			Question: "q2", Answer: "a2", Topic: "t", Model: "m", Persona: "p", UserID: u.ID}})); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	r := catsrv(t, nil, nil, "erase", "--db", dsn, "--user", "provider_b:1234")
	want := "erased " + privacy.ErasedRef(ids["1234"]) + ": account=true memory=true sessions=1 conversations=1 interactions=2\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("erase: exit %d, stdout %q (want %q), stderr %s", r.code, r.stdout, want, r.stderr)
	}
	again := catsrv(t, nil, nil, "erase", "--db", dsn, "--user", "provider_b:1234")
	if again.code != 1 || !strings.Contains(again.stderr, "user not found") {
		t.Fatalf("second erase: exit %d, stderr %s", again.code, again.stderr)
	}

	store, err = sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if records, err = authsql.Open(ctx, store); err != nil {
		t.Fatal(err)
	}
	if chats, err = chatsql.Open(ctx, store); err != nil {
		t.Fatal(err)
	}
	for sub, gone := range map[string]bool{"1234": true, "5678": false} {
		id := ids[sub]
		_, err := records.User(ctx, id)
		_, _, convErr := chats.Conversation(ctx, chat.Owner{Cat: "demo", UserID: id}, "c"+sub)
		_, tokErr := records.RefreshToken(ctx, "h"+sub)
		m, memErr := records.Memory(ctx, id)
		if memErr != nil {
			t.Fatal(memErr)
		}
		if gone != (errs.KindOf(err) == errs.KindNotFound) || gone != (errs.KindOf(convErr) == errs.KindNotFound) ||
			gone != (errs.KindOf(tokErr) == errs.KindNotFound) || gone != m.UpdatedAt.IsZero() {
			t.Fatalf("user %s (erased %v): user %v, conversation %v, token %v, memory %+v", sub, gone, err, convErr, tokErr, m)
		}
	}
	for cat, want := range map[string]int64{"demo": 1, "other": 1} {
		c, err := store.Answer(ctx, analytics.Query{Cat: cat, Range: analytics.Range{Start: at.Add(-time.Hour), End: at.Add(time.Hour)}}, analytics.PartTotal)
		if err != nil || c.Total != want {
			t.Fatalf("%s total after erasure = %d, %v; want %d", cat, c.Total, err, want)
		}
	}
	events, err := records.Events(ctx, auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	// The reference is a hash: it may hold "1234" by chance, so the
	// subject and the id are looked for in the rest of the reason.
	ref := privacy.ErasedRef(ids["1234"])
	rest, named := strings.CutPrefix(last.Reason, "by=cli erased="+ref)
	if last.Kind != privacy.AuditErasure || last.UserID != "" || !named ||
		strings.Contains(rest, "1234") || strings.Contains(last.Reason, ids["1234"]) {
		t.Fatalf("audit event %+v", last)
	}
}

// TestServeErasesThroughTheIndex runs serve on demo data with the column
// index as the warehouse: erasing a user over HTTP (the admin route) and
// oneself (DELETE /me after a chat) leaves /all_warehouse (the index) equal
// to /all (the raw log) and both short of exactly the erased rows.
func TestServeErasesThroughTheIndex(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	demo := catsrv(t, nil, nil, "demo", "--interactions", "2000", "--cats", "demo", "--days", "30", "--seed", "3")
	if imp := catsrv(t, strings.NewReader(demo.stdout), nil, "import", "--config", cfg, "--db", db, "-"); demo.code != 0 || imp.code != 0 {
		t.Fatalf("demo/import: %s %s", demo.stderr, imp.stderr)
	}
	// The erased user: the one of the first api line, and how many api
	// lines of the CAT are theirs.
	victim, theirs := "", int64(0)
	for _, line := range strings.Split(strings.TrimSpace(demo.stdout), "\n") {
		var rec struct{ UserID, EventKind string }
		if err := json.Unmarshal([]byte(line), &struct {
			UserID    *string `json:"user_id"`
			EventKind *string `json:"event_kind"`
		}{&rec.UserID, &rec.EventKind}); err != nil {
			t.Fatal(err)
		}
		if victim == "" && rec.UserID != "" && rec.EventKind == "api" {
			victim = rec.UserID
		}
		if rec.UserID == victim && victim != "" && rec.EventKind == "api" {
			theirs++
		}
	}
	token := func(subject, role string) string {
		r := catsrv(t, nil, nil, "token", "--config", cfg, "--subject", subject, "--role", role, "--ttl", "1h")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		return lines[len(lines)-1]
	}
	admin, alice := token("ops", "admin"), token("alice", "user")

	base := startServe(t, cfg, db).base
	call := func(method, path, bearer, body string) (int, []byte) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequestWithContext(context.Background(), method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	answer := func(route string) map[string]any {
		code, b := call(http.MethodGet, "/api/v1/analytics/"+route+"?catname=demo&start_date=2000-01-01&end_date=2100-01-01", admin, "")
		var m map[string]any
		if code != http.StatusOK || json.Unmarshal(b, &m) != nil {
			t.Fatalf("%s: %d %s", route, code, b)
		}
		delete(m, "data_source")
		delete(m, "performance_ms")
		return m
	}
	if code, b := call(http.MethodPost, "/api/v1/cat/chat?catname=demo", alice, `{"message":"hello"}`); code != http.StatusOK {
		t.Fatalf("chat: %d %s", code, b)
	}
	before := int64(answer("all")["total_interactions"].(float64))

	if code, b := call(http.MethodDelete, "/api/v1/auth/users/"+victim, admin, ""); code != http.StatusNoContent {
		t.Fatalf("erase %s: %d %s", victim, code, b)
	}
	if code, b := call(http.MethodDelete, "/api/v1/auth/me", alice, ""); code != http.StatusNoContent {
		t.Fatalf("erase me: %d %s", code, b)
	}
	raw, index := answer("all"), answer("all_warehouse")
	if got := int64(raw["total_interactions"].(float64)); got != before-theirs-1 {
		t.Fatalf("total after erasing %s (%d rows) and alice (1): %d, was %d", victim, theirs, got, before)
	}
	rawJSON, _ := json.Marshal(raw)
	indexJSON, _ := json.Marshal(index)
	if string(rawJSON) != string(indexJSON) {
		t.Fatalf("the index after erasure:\n%s\nthe raw log:\n%s", indexJSON, rawJSON)
	}
}
