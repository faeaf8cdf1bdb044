package authapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
)

// erasureWorld is a server over memory with three users' data in two
// CATs: chats (conversations, messages and their interactions), memory,
// and imported interactions of each user.
type erasureWorld struct {
	e                 *ChatEnv
	alice, bob, carol string
	admin             string
}

func newErasureWorld(t *testing.T) *erasureWorld {
	t.Helper()
	e := NewChatEnv(t)
	w := &erasureWorld{e: e, alice: e.Token(t, "alice", auth.RoleUser), bob: e.Token(t, "bob", auth.RoleUser),
		carol: e.Token(t, "carol", auth.RoleUser), admin: e.Token(t, "root", auth.RoleAdmin)}
	var seeded []analytics.Interaction
	for i := range 60 {
		user := []string{"alice", "bob", "carol"}[i%3]
		cat := []string{LegacyCat, CustomCat}[i%2]
		seeded = append(seeded, analytics.Interaction{
			Time: Now.Add(-time.Duration(i) * time.Hour), Cat: cat, EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("question %d", i%7), Answer: fmt.Sprintf("answer %d", i%5),
			Topic: []string{"billing", "shipping"}[i%2], Model: "qa", Persona: "default", UserID: user,
		})
	}
	if _, err := e.Log.Append(t.Context(), analytics.Each(seeded)); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{w.alice, w.bob, w.carol} {
		for _, cat := range []string{LegacyCat, CustomCat} {
			r := e.Call(t, http.MethodPost, ChatPath+"/chat?catname="+cat, who,
				map[string]any{"message": "hello, where is my parcel?", "context": map[string]any{"channel": "faq"}})
			if r.Status != http.StatusOK {
				t.Fatalf("chat in %s: %d %s", cat, r.Status, r.Body)
			}
		}
		if r := e.Call(t, http.MethodPost, AuthPrefix+"/memory", who, `{"preferences":{"lang":"fr"}}`); r.Status != http.StatusOK {
			t.Fatalf("memory: %d %s", r.Status, r.Body)
		}
	}
	return w
}

// export is the caller's export, checked to be one valid document.
func (w *erasureWorld) export(t *testing.T, who string) []byte {
	t.Helper()
	r := w.e.Call(t, http.MethodGet, AuthPrefix+"/me/export", who, nil)
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
	r := w.e.Call(t, http.MethodGet, "/api/v1/analytics/interactions/export?format=jsonl&limit=100000&start_date=2020-01-01&end_date=2030-01-01&catname="+cat, w.admin, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("chat-log export: %d %s", r.Status, r.Body)
	}
	lines := strings.Split(strings.TrimSpace(string(r.Body)), "\n")
	slices.Sort(lines)
	return lines
}

// all is /all of the CAT over every date, decoded.
func (w *erasureWorld) all(t *testing.T, cat string) map[string]any {
	t.Helper()
	r := w.e.Call(t, http.MethodGet, "/api/v1/analytics/all?start_date=2020-01-01&end_date=2030-01-01&catname="+cat, w.admin, nil)
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
	e := w.e
	bobBefore, carolBefore := w.export(t, w.bob), w.export(t, w.carol)
	logBefore := map[string][]string{LegacyCat: w.chatLog(t, LegacyCat), CustomCat: w.chatLog(t, CustomCat)}

	if r := e.Call(t, http.MethodDelete, AuthPrefix+"/users/alice", w.bob, nil); r.Status != http.StatusForbidden {
		t.Fatalf("erasure by a non-admin: %d %s", r.Status, r.Body)
	}
	if r := e.Call(t, http.MethodDelete, AuthPrefix+"/users/alice", w.admin, nil); r.Status != http.StatusNoContent || len(r.Body) != 0 {
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
	for _, cat := range []string{LegacyCat, CustomCat} {
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
		if got, want := jsonOf(t, w.all(t, cat)), jsonOf(t, ref); got != want {
			t.Fatalf("%s /all after erasure:\n%s\nreference over what remains:\n%s", cat, got, want)
		}
	}

	// Idempotent: nothing left, still 204; an unknown identity is 404.
	if r := e.Call(t, http.MethodDelete, AuthPrefix+"/users/alice", w.admin, nil); r.Status != http.StatusNoContent {
		t.Fatalf("second erasure: %d %s", r.Status, r.Body)
	}
	if r := e.Call(t, http.MethodDelete, AuthPrefix+"/users/provider_a:nobody", w.admin, nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown identity: %d %s", r.Status, r.Body)
	}

	events, err := e.Auth.Events(t.Context(), auth.AuditFilter{})
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
		!strings.Contains(first.Reason, "memory=true sessions=0 conversations=2 interactions=22") {
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
		if r := w.e.Call(t, http.MethodDelete, AuthPrefix+"/me", w.alice, nil); r.Status != http.StatusNoContent {
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
	events, err := w.e.Auth.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Kind == privacy.AuditErasure && (ev.UserID != "" || ev.IP != "" || ev.UserAgent != "" || !strings.HasPrefix(ev.Reason, "by=self ")) {
			t.Fatalf("self-erasure event keeps the person: %+v", ev)
		}
	}
	if r := w.e.Call(t, http.MethodDelete, AuthPrefix+"/me", "", nil); r.Status != http.StatusUnauthorized {
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
	if r := w.e.Call(t, http.MethodDelete, path, w.alice, nil); r.Status != http.StatusForbidden {
		t.Fatalf("by a user: %d %s", r.Status, r.Body)
	}
	if r := w.e.Call(t, http.MethodDelete, ChatPath+"/users/alice/conversations/"+c.ID+"?catname="+c.Cat, w.admin, nil); r.Status != http.StatusNotFound {
		t.Fatalf("under another user: %d %s", r.Status, r.Body)
	}
	if r := w.e.Call(t, http.MethodDelete, path, w.admin, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := w.e.Call(t, http.MethodDelete, path, w.admin, nil); r.Status != http.StatusNotFound {
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
