package chatapi_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
)

// The fuzz targets of the HTTP app (make fuzz; README.md, Fuzz tests). Each
// drives the real app over a real SQLite database (and, when the seed
// corpus runs as ordinary tests with CATSRV_TEST_POSTGRES_DSN set, over
// PostgreSQL too) and holds the same property: no answer is a server
// failure (see serverFault), nothing panics, nothing is logged at ERROR.
// Their seed corpora are the f.Add calls below and testdata/fuzz/<name>/.

// FuzzConversationID sends any id to the three routes that take one in
// the path. An id no back end can hold is 422; any other id that is not
// the caller's conversation is 404 (or 422 when over the length limit),
// unless it changes the route (a slash, a dot segment).
func FuzzConversationID(f *testing.F) {
	for _, id := range []string{"abc\x00x", "\x00", "abc\xffx", "\x80", "caf\xc3", "0123456789abcdef0123456789abcdef",
		"%00", "\\x00", "' OR 1=1 --", `\' OR 1=1 --`, "search", "a/b", "..", "é", strings.Repeat("x", 201)} {
		f.Add(id)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, id string) {
		base := ChatPath + "/conversations/" + url.PathEscape(id)
		routed := id != "" && id != "." && id != ".." && !strings.Contains(id, "/")
		for _, e := range envs {
			if id == e.Conv {
				return // the one id that names a conversation
			}
			for _, req := range []struct{ method, target, body string }{
				{http.MethodGet, base, ""},
				{http.MethodPut, base + "/rename", `{"name":"renamed"}`},
				{http.MethodDelete, base, ""},
			} {
				what := req.method + " " + req.target
				r := e.Do(t, req.method, req.target, e.User, req.body)
				e.CheckFuzz(t, what, r)
				if !routed || (id == "search" && req.method == http.MethodGet) {
					continue
				}
				want := http.StatusNotFound
				if chat.CheckID(id) != nil || utf8.RuneCountInString(id) > 200 {
					want = http.StatusUnprocessableEntity
				}
				if r.Status != want {
					t.Errorf("%s: %s: status %d %s, want %d", e.Name, what, r.Status, r.Body, want)
				}
			}
		}
	})
}

// FuzzConversationCursor sends any cursor to the conversation list: raw,
// or base64-encoded as the service's own are, so that the decoded bytes
// are fuzzed too. A cursor the service could have made is 200; anything
// else 422.
func FuzzConversationCursor(f *testing.F) {
	for _, c := range []struct {
		cursor string
		encode bool
	}{
		{"1710493200000000000:abc\x00x", true}, {"1710493200000000000:abc\xffx", true}, {"1:\x00", true},
		{"1710493200000000000:0123456789abcdef", true}, {"-1:x", true}, {"99999999999999999999:x", true}, {":x", true},
		{"1:", true}, {"x", true}, {"", true}, {"%00", false}, {"!!", false}, {"MTcxMDQ5MzIwMDAwMDAwMDAwMDphYmMAeA", false},
		{"MTo=", false}, {strings.Repeat("A", 600), false},
	} {
		f.Add(c.cursor, c.encode)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, cursor string, encode bool) {
		if encode {
			cursor = base64.RawURLEncoding.EncodeToString([]byte(cursor))
		}
		target := ChatPath + "/conversations?limit=2&cursor=" + url.QueryEscape(cursor)
		want := http.StatusUnprocessableEntity
		if _, err := chat.ParseCursor(cursor); (err == nil || cursor == "") && utf8.RuneCountInString(cursor) <= 512 {
			want = http.StatusOK
		}
		for _, e := range envs {
			r := e.Do(t, http.MethodGet, target, e.User, "")
			e.CheckFuzz(t, "GET "+target, r)
			if r.Status != want {
				t.Errorf("%s: GET %s: status %d %s, want %d", e.Name, target, r.Status, r.Body, want)
			}
		}
	})
}

// FuzzChatBody sends any body to POST /api/v1/cat/chat of a legacy CAT
// (no model service needed), plain or streamed. "$CONV" in a body stands
// for the id of the caller's conversation, so seeds can continue it.
func FuzzChatBody(f *testing.F) {
	for _, b := range []string{
		`{"message":"hello"}`, `{"message":"how do I reset my password","conversation_id":"$CONV"}`,
		`{"message":"hi","conversation_id":"abc\u0000x"}`, `{"message":"hi","conversation_id":"abc` + "\xff" + `x"}`,
		`{"message":"a\u0000b"}`, `{"message":"` + "\xff\xfe" + `"}`, `{"message":"hi","stream":true}`,
		`{"message":"hi","stream":true,"conversation_id":"\u0000"}`, `{"message":"hi","model":"\u0000"}`,
		`{"message":"hi","context":{"topic":"\u0000","persona":"` + "\xc3" + `"}}`, `{"message":"hi","context":{"\u0000":[1,{"a":null}]}}`,
		`{"message":"hi","context":{"topic":1e999}}`, `{"message":"   "}`, `{"message":""}`, `{}`, `[]`, `null`, ``, `{"message":`,
		`{"message":"hi","conversation_id":null,"model":null}`, `{"message":"hi","extra":true}`,
		`{"message":"` + strings.Repeat("x", 70) + `"}`, `{"message":"hi","conversation_id":"` + strings.Repeat("é", 201) + `"}`,
	} {
		f.Add(b)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, body string) {
		for _, e := range envs {
			b := strings.ReplaceAll(body, "$CONV", e.Conv)
			r := e.Do(t, http.MethodPost, ChatPath+"/chat", e.User, b)
			e.CheckFuzz(t, "POST /chat "+b, r)
		}
	})
}

// FuzzConversationCat sends any catname to the conversation routes that
// take one without reading the CAT's configuration (list, search, delete,
// rename, the admin's delete): a name that cannot name a CAT (a NUL, say,
// which PostgreSQL cannot store) is 422, never a server failure.
func FuzzConversationCat(f *testing.F) {
	for _, c := range []string{"x\x00", "\x00", "shop", "Shop", "caf\xc3", "é", "a b", "' OR 1=1 --", strings.Repeat("x", 64), "-x"} {
		f.Add(c)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, cat string) {
		q := "catname=" + url.QueryEscape(cat)
		for _, e := range envs {
			for _, req := range []struct{ method, target, auth, body string }{
				{http.MethodGet, ChatPath + "/conversations?" + q, e.User, ""},
				{http.MethodGet, ChatPath + "/conversations/search?q=hello&" + q, e.User, ""},
				{http.MethodDelete, ChatPath + "/conversations/nope0123?" + q, e.User, ""},
				{http.MethodPut, ChatPath + "/conversations/nope0123/rename?" + q, e.User, `{"name":"renamed"}`},
				{http.MethodDelete, ChatPath + "/users/someone/conversations/nope0123?" + q, e.Admin, ""},
			} {
				what := req.method + " " + req.target
				r := e.Do(t, req.method, req.target, req.auth, req.body)
				e.CheckFuzz(t, what, r)
				if cat != "" && !catconfig.ValidName(cat) && utf8.RuneCountInString(cat) <= 64 && r.Status != http.StatusUnprocessableEntity {
					t.Errorf("%s: %s: status %d %s, want 422", e.Name, what, r.Status, r.Body)
				}
			}
		}
	})
}
