package authapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/ports"
)

// erasureWorld is a server over memory with three users' data in two
// CATs: chats (conversations, messages and their interactions), memory,
// and imported interactions of each user.
type erasureWorld struct {
	do                func(t *testing.T, method, path, auth string, body any) Resp
	audit             ports.AuditLog
	cats              []string
	alice, bob, carol string
	admin             string
}

// newErasureWorldOver seeds the server do reaches: 60 interactions of
// three users over the CATs, and for each user a chat in each CAT and a
// memory.
func newErasureWorldOver(t *testing.T, w *erasureWorld, store func([]analytics.Interaction)) *erasureWorld {
	t.Helper()
	var seeded []analytics.Interaction
	for i := range 60 {
		user := []string{"alice", "bob", "carol"}[i%3]
		seeded = append(seeded, analytics.Interaction{
			Time: Now.Add(-time.Duration(i) * time.Hour), Cat: w.cats[i%len(w.cats)], EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("question %d", i%7), Answer: fmt.Sprintf("answer %d", i%5),
			Topic: []string{"billing", "shipping"}[i%2], Model: "qa", Persona: "default", UserID: user,
		})
	}
	store(seeded)
	for _, who := range []string{w.alice, w.bob, w.carol} {
		for _, cat := range w.cats {
			r := w.do(t, http.MethodPost, ChatPath+"/chat?catname="+cat, who,
				map[string]any{"message": "hello, where is my parcel?", "context": map[string]any{"channel": "faq"}})
			if r.Status != http.StatusOK {
				t.Fatalf("chat in %s: %d %s", cat, r.Status, r.Body)
			}
		}
		if r := w.do(t, http.MethodPost, AuthPrefix+"/memory", who, `{"preferences":{"lang":"fr"}}`); r.Status != http.StatusOK {
			t.Fatalf("memory: %d %s", r.Status, r.Body)
		}
	}
	return w
}

// newErasureWorld is the world over memory, in CATs shop and mix.
func newErasureWorld(t *testing.T) *erasureWorld {
	t.Helper()
	e := NewChatEnv(t)
	do := func(t *testing.T, method, path, auth string, body any) Resp {
		return e.Call(t, method, path, auth, body)
	}
	w := &erasureWorld{do: do, audit: e.Auth, cats: []string{LegacyCat, CustomCat},
		alice: e.Token(t, "alice", auth.RoleUser), bob: e.Token(t, "bob", auth.RoleUser),
		carol: e.Token(t, "carol", auth.RoleUser), admin: e.Token(t, "root", auth.RoleAdmin)}
	return newErasureWorldOver(t, w, func(in []analytics.Interaction) {
		if _, err := e.Log.Append(t.Context(), analytics.Each(in)); err != nil {
			t.Fatal(err)
		}
	})
}

// export is the caller's export, checked to be one valid document.
func (w *erasureWorld) export(t *testing.T, who string) []byte {
	t.Helper()
	r := w.do(t, http.MethodGet, AuthPrefix+"/me/export", who, nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	var doc authapi.ExportDocument
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("export is not one JSON document: %v\n%s", err, r.Body)
	}
	return r.Body
}

// chatLog is every interaction of the CAT as the admin export gives it,
// one JSON line each, sorted.
func (w *erasureWorld) chatLog(t *testing.T, cat string) []string {
	t.Helper()
	r := w.do(t, http.MethodGet, "/api/v1/analytics/interactions/export?format=jsonl&limit=100000&start_date=2020-01-01&end_date=2030-01-01&catname="+cat, w.admin, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("chat-log export: %d %s", r.Status, r.Body)
	}
	lines := strings.Split(strings.TrimSpace(string(r.Body)), "\n")
	slices.Sort(lines)
	return lines
}

// all is /all of the CAT over every date, decoded.
func (w *erasureWorld) all(t *testing.T, route, cat string) map[string]any {
	t.Helper()
	r := w.do(t, http.MethodGet, "/api/v1/analytics"+route+"?start_date=2020-01-01&end_date=2030-01-01&catname="+cat, w.admin, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/all: %d %s", r.Status, r.Body)
	}
	var m map[string]any
	r.Decode(t, &m)
	return m
}

// TestEraseLeavesOthersUntouched erases alice by admin route and checks
// that she is gone everywhere, that bob's and carol's exports are byte for
// byte what they were, that the chat log lost exactly her lines, and that
// /all equals the reference over what remains; then that a second erasure
// answers 204 and the audit log names no one.
func TestEraseLeavesOthersUntouched(t *testing.T) {
	w := newErasureWorld(t)
	checkErasure(t, w, 22, 2)
}

// TestEraseOverSQL is TestEraseLeavesOthersUntouched over SQLite and
// PostgreSQL, with the raw log and the SQL rollups compared to the
// reference.
func TestEraseOverSQL(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := NewSQLEnv(t, b)
			w := &erasureWorld{audit: e.Records, cats: []string{LegacyCat},
				alice: e.User, bob: e.Bearer(t, "bob", auth.RoleUser), carol: e.Bearer(t, "carol", auth.RoleUser), admin: e.Admin}
			w.do = func(t *testing.T, method, path, auth string, body any) Resp {
				raw, ok := body.(string)
				if !ok && body != nil {
					b, err := json.Marshal(body)
					if err != nil {
						t.Fatal(err)
					}
					raw = string(b)
				}
				r := e.Do(t, method, path, auth, raw)
				return Resp(r)
			}
			newErasureWorldOver(t, w, func(in []analytics.Interaction) {
				r := w.do(t, http.MethodPost, ChatPath+"/chat", w.alice, `{"message":"one more"}`)
				if r.Status != http.StatusOK {
					t.Fatalf("chat: %d %s", r.Status, r.Body)
				}
				if _, err := e.Store.Append(t.Context(), analytics.Each(in)); err != nil {
					t.Fatal(err)
				}
			})
			// alice: 20 seeded, the env's first chat, one more and one in
			// the world; her two conversations (the env's and the world's).
			checkErasure(t, w, 23, 3)
		})
	}
}

// checkErasure erases alice and checks the world: interactions and
// conversations are what alice had.
func checkErasure(t *testing.T, w *erasureWorld, interactions, conversations int) {
	t.Helper()
	bobBefore, carolBefore := w.export(t, w.bob), w.export(t, w.carol)
	logBefore := map[string][]string{}
	for _, cat := range w.cats {
		logBefore[cat] = w.chatLog(t, cat)
	}

	if r := w.do(t, http.MethodDelete, AuthPrefix+"/users/alice", w.bob, nil); r.Status != http.StatusForbidden {
		t.Fatalf("erasure by a non-admin: %d %s", r.Status, r.Body)
	}
	if r := w.do(t, http.MethodDelete, AuthPrefix+"/users/alice", w.admin, nil); r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("erase alice: %d %s", r.Status, r.Body)
	}

	var gone authapi.ExportDocument
	if err := json.Unmarshal(w.export(t, w.alice), &gone); err != nil {
		t.Fatal(err)
	}
	if gone.Account != nil || len(gone.Memory.Preferences) != 0 || gone.Memory.UpdatedAt != nil || len(gone.Conversations) != 0 {
		t.Fatalf("alice's export after erasure: %+v", gone)
	}
	if got := w.export(t, w.bob); !bytesEqualButTime(got, bobBefore) {
		t.Fatalf("bob's export changed:\n%s\nwas\n%s", got, bobBefore)
	}
	if got := w.export(t, w.carol); !bytesEqualButTime(got, carolBefore) {
		t.Fatalf("carol's export changed:\n%s\nwas\n%s", got, carolBefore)
	}
	for _, cat := range w.cats {
		after := w.chatLog(t, cat)
		want := slices.DeleteFunc(slices.Clone(logBefore[cat]), func(l string) bool { return strings.Contains(l, `"user_id":"alice"`) })
		if len(want) == len(logBefore[cat]) {
			t.Fatalf("%s: alice had no interactions to erase", cat)
		}
		if !slices.Equal(after, want) {
			t.Fatalf("%s chat log after erasure: %d lines, want %d (the others' exactly)", cat, len(after), len(want))
		}
		var remaining []analytics.Interaction
		for l := range jsonl.Decode(strings.NewReader(strings.Join(after, "\n"))) {
			if l.Err != nil {
				t.Fatal(l.Err)
			}
			remaining = append(remaining, l.Interaction)
		}
		q := analytics.Query{Cat: cat, Range: analytics.Range{Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}}
		ref := ResultMap(analytics.Aggregate(remaining, q))
		for _, route := range []string{"/all", "/all_warehouse"} {
			got, want := w.all(t, route, cat), maps.Clone(ref)
			for _, k := range []string{"data_source", "performance_ms"} { // how, not what
				delete(got, k)
				delete(want, k)
			}
			if got, want := jsonOf(t, got), jsonOf(t, want); got != want {
				t.Fatalf("%s %s after erasure:\n%s\nreference over what remains:\n%s", cat, route, got, want)
			}
		}
	}

	// Idempotent: nothing left, still 204; an unknown identity is 404.
	if r := w.do(t, http.MethodDelete, AuthPrefix+"/users/alice", w.admin, nil); r.Status != http.StatusNoContent {
		t.Fatalf("second erasure: %d %s", r.Status, r.Body)
	}
	if r := w.do(t, http.MethodDelete, AuthPrefix+"/users/provider_a:nobody", w.admin, nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown identity: %d %s", r.Status, r.Body)
	}

	events, err := w.audit.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var erasures []auth.AuditEvent
	for _, ev := range events {
		if ev.Kind == privacy.AuditErasure {
			erasures = append(erasures, ev)
		}
	}
	if len(erasures) != 2 {
		t.Fatalf("erasure events: %+v, want 2", erasures)
	}
	first := erasures[0]
	if first.UserID != "root" || strings.Contains(first.Reason, "alice") ||
		!strings.Contains(first.Reason, "by=admin erased="+privacy.ErasedRef("alice")+" ") ||
		!strings.Contains(first.Reason, fmt.Sprintf("memory=true sessions=0 conversations=%d interactions=%d", conversations, interactions)) {
		t.Fatalf("first erasure event: %+v", first)
	}
	if !strings.Contains(erasures[1].Reason, "memory=false sessions=0 conversations=0 interactions=0") {
		t.Fatalf("second erasure event: %+v", erasures[1])
	}
}

// TestEraseMe erases the caller: a bearer token's subject, twice (204
// both times), leaving the others.
func TestEraseMe(t *testing.T) {
	w := newErasureWorld(t)
	bobBefore := w.export(t, w.bob)
	for range 2 {
		if r := w.do(t, http.MethodDelete, AuthPrefix+"/me", w.alice, nil); r.Status != http.StatusNoContent {
			t.Fatalf("erase me: %d %s", r.Status, r.Body)
		}
	}
	var gone authapi.ExportDocument
	if err := json.Unmarshal(w.export(t, w.alice), &gone); err != nil {
		t.Fatal(err)
	}
	if len(gone.Conversations) != 0 || len(gone.Memory.Preferences) != 0 {
		t.Fatalf("alice after erasing herself: %+v", gone)
	}
	if got := w.export(t, w.bob); !bytesEqualButTime(got, bobBefore) {
		t.Fatal("bob's data changed")
	}
	events, err := w.audit.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Kind == privacy.AuditErasure && (ev.UserID != "" || ev.IP != "" || ev.UserAgent != "" || !strings.HasPrefix(ev.Reason, "by=self ")) {
			t.Fatalf("self-erasure event keeps the person: %+v", ev)
		}
	}
	if r := w.do(t, http.MethodDelete, AuthPrefix+"/me", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("anonymous erase: %d %s", r.Status, r.Body)
	}
}

// TestExportDocument checks the export's content: account-less caller,
// memory, both CATs' conversations with their messages.
func TestExportDocument(t *testing.T) {
	w := newErasureWorld(t)
	var doc authapi.ExportDocument
	if err := json.Unmarshal(w.export(t, w.bob), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.UserID != "bob" || doc.Account != nil || string(doc.Memory.Preferences["lang"]) != `"fr"` || len(doc.Conversations) != 2 {
		t.Fatalf("bob's export: %+v", doc)
	}
	cats := []string{doc.Conversations[0].Cat, doc.Conversations[1].Cat}
	if !slices.Equal(cats, []string{CustomCat, LegacyCat}) {
		t.Fatalf("export CATs %v, want by name", cats)
	}
	for _, c := range doc.Conversations {
		if len(c.Messages) != 2 || c.Messages[0].Role != "user" || c.Messages[0].Content != "hello, where is my parcel?" || c.Messages[1].Content == "" {
			t.Fatalf("exported conversation: %+v", c)
		}
		// Each message carries the id the conversation route gives it.
		r := w.do(t, http.MethodGet, ChatPath+"/conversations/"+c.ID+"?catname="+c.Cat, w.bob, nil)
		var d chatapi.ConversationDetail
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &d) != nil {
			t.Fatalf("conversation %s: %d %s", c.ID, r.Status, r.Body)
		}
		var got, want []string
		for _, m := range c.Messages {
			got = append(got, m.Role+" "+m.ID)
		}
		for _, m := range d.Messages {
			want = append(want, m.Role+" "+m.ID)
		}
		if !slices.Equal(got, want) || slices.ContainsFunc(c.Messages, func(m authapi.ExportMessage) bool { return m.ID == "" }) {
			t.Errorf("exported messages %q, the conversation's %q", got, want)
		}
	}
}

// bytesEqualButTime compares two exports but for exported_at.
func bytesEqualButTime(a, b []byte) bool {
	cut := func(x []byte) string {
		s := string(x)
		i := strings.Index(s, `"exported_at":"`)
		j := strings.Index(s, `","account"`)
		if i < 0 || j < i {
			return s
		}
		return s[:i] + s[j:]
	}
	return cut(a) == cut(b)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAdminDeletesConversation deletes bob's conversation as an admin:
// only an admin may, only that one goes, a second time is 404.
func TestAdminDeletesConversation(t *testing.T) {
	w := newErasureWorld(t)
	var doc authapi.ExportDocument
	if err := json.Unmarshal(w.export(t, w.bob), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Conversations[1]
	path := ChatPath + "/users/bob/conversations/" + c.ID + "?catname=" + c.Cat
	if r := w.do(t, http.MethodDelete, path, w.alice, nil); r.Status != http.StatusForbidden {
		t.Fatalf("by a user: %d %s", r.Status, r.Body)
	}
	if r := w.do(t, http.MethodDelete, ChatPath+"/users/alice/conversations/"+c.ID+"?catname="+c.Cat, w.admin, nil); r.Status != http.StatusNotFound {
		t.Fatalf("under another user: %d %s", r.Status, r.Body)
	}
	if r := w.do(t, http.MethodDelete, path, w.admin, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := w.do(t, http.MethodDelete, path, w.admin, nil); r.Status != http.StatusNotFound {
		t.Fatalf("delete again: %d %s", r.Status, r.Body)
	}
	var after authapi.ExportDocument
	if err := json.Unmarshal(w.export(t, w.bob), &after); err != nil {
		t.Fatal(err)
	}
	if len(after.Conversations) != 1 || after.Conversations[0].ID != doc.Conversations[0].ID {
		t.Fatalf("bob's conversations after the deletion: %+v", after.Conversations)
	}
}

// TestEraseMeEndsTheSession erases a signed-in user through the session
// cookie: the origin check applies, the cookies are cleared, every token
// of the login (access before and after a refresh, refresh) stops working
// at once, the account and memory are gone, and the same identity signs up
// afresh as a new account.
func TestEraseMeEndsTheSession(t *testing.T) {
	e := NewAuthEnv(t)
	b := e.Browser(t)
	b.Login(auth.ProviderA)
	first := b.Cookie("catsrv_access", "/")
	claims, err := e.Tokens.Verify(first)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":{"lang":"fr"}}`, b.SameOrigin()...); r.Status != http.StatusOK {
		t.Fatalf("memory: %d %s", r.Status, r.Body)
	}
	if r := b.Do(http.MethodPost, AuthPrefix+"/refresh", "", b.SameOrigin()...); r.Status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	access, refresh := b.Cookie("catsrv_access", "/"), b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
	if r := b.Do(http.MethodDelete, AuthPrefix+"/me", "", "Origin", RefusedOrigin); r.Status != http.StatusForbidden {
		t.Fatalf("erase from a foreign origin: %d %s", r.Status, r.Body)
	}
	r := b.Do(http.MethodDelete, AuthPrefix+"/me", "", b.SameOrigin()...)
	if r.Status != http.StatusNoContent {
		t.Fatalf("erase me: %d %s", r.Status, r.Body)
	}
	if b.Cookie("catsrv_access", "/") != "" || b.Cookie("catsrv_refresh", AuthPrefix+"/refresh") != "" {
		t.Fatal("the erasure left session cookies")
	}
	other := e.Browser(t)
	for name, tok := range map[string]string{"first access token": first, "refreshed access token": access} {
		if r := other.Do(http.MethodGet, AuthPrefix+"/memory", "", "Authorization", "Bearer "+tok); r.Status != http.StatusUnauthorized {
			t.Errorf("%s after erasure: %d %s", name, r.Status, r.Body)
		}
	}
	if r := other.Do(http.MethodPost, AuthPrefix+"/refresh", `{"refresh_token":"`+refresh+`"}`); r.Status != http.StatusUnauthorized {
		t.Errorf("refresh token after erasure: %d %s", r.Status, r.Body)
	}
	if r := other.Do(http.MethodDelete, AuthPrefix+"/me", "", "Authorization", "Bearer "+access); r.Status != http.StatusUnauthorized {
		t.Errorf("second erasure with the erased session: %d %s, want 401 (documented)", r.Status, r.Body)
	}
	if _, err := e.Store.User(t.Context(), claims.Subject); err == nil {
		t.Fatal("the account survived the erasure")
	}
	if m, err := e.Store.Memory(t.Context(), claims.Subject); err != nil || len(m.Preferences) != 0 {
		t.Fatalf("memory after erasure: %+v, %v", m, err)
	}
	again := e.Browser(t)
	again.Login(auth.ProviderA)
	c2, err := e.Tokens.Verify(again.Cookie("catsrv_access", "/"))
	if err != nil || c2.Subject == claims.Subject {
		t.Fatalf("login after erasure: %+v, %v; want a new account", c2, err)
	}
	events, err := e.Store.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Kind == privacy.AuditErasure {
			if ev.UserID != "" || ev.IP != "" || !strings.Contains(ev.Reason, "by=self erased="+privacy.ErasedRef(claims.Subject)+" account=true memory=true sessions=1 ") {
				t.Fatalf("erasure event: %+v", ev)
			}
			return
		}
	}
	t.Fatal("no erasure event")
}
