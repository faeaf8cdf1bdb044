package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"

	"github.com/catsrv/catsrv/core/chat"
)

// The fuzz targets of the HTTP app (make fuzz; README.md, Fuzz tests). Each
// drives the real app over a real SQLite database (and, when the seed
// corpus runs as ordinary tests with CATSRV_TEST_POSTGRES_DSN set, over
// PostgreSQL too) and holds the same property: no answer is a server
// failure (see serverFault), nothing panics, nothing is logged at ERROR.
// Their seed corpora are the f.Add calls below and testdata/fuzz/<name>/.

// fuzzEnvs builds one app per back end of sqlBackends for a fuzz target.
func fuzzEnvs(f *testing.F) []*sqlEnv {
	f.Helper()
	var out []*sqlEnv
	for _, b := range sqlBackends() {
		out = append(out, newSQLEnv(f, b))
	}
	return out
}

// checkFuzz is checkClean with the back end named, and with the events
// of a streamed reply read too: an error event must not be a server
// failure either.
func (e *sqlEnv) checkFuzz(t *testing.T, what string, r response) {
	t.Helper()
	what = e.name + ": " + what
	e.checkClean(t, what, r)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, len(r.body)+1)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev base.ErrorBody
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Code != "" && ev.Status >= http.StatusInternalServerError {
			t.Errorf("%s: error event %s", what, data)
		}
	}
}

// FuzzConversationID sends any id to the three routes that take one in
// the path. An id no back end can hold is 422; any other id that is not
// the caller's conversation is 404 (or 422 when over the length limit),
// unless it changes the route (a slash, a dot segment).
func FuzzConversationID(f *testing.F) {
	for _, id := range []string{"abc\x00x", "\x00", "abc\xffx", "\x80", "caf\xc3", "0123456789abcdef0123456789abcdef",
		"%00", "\\x00", "' OR 1=1 --", `\' OR 1=1 --`, "search", "a/b", "..", "é", strings.Repeat("x", 201)} {
		f.Add(id)
	}
	envs := fuzzEnvs(f)
	f.Fuzz(func(t *testing.T, id string) {
		base := chatPath + "/conversations/" + url.PathEscape(id)
		routed := id != "" && id != "." && id != ".." && !strings.Contains(id, "/")
		for _, e := range envs {
			if id == e.conv {
				return // the one id that names a conversation
			}
			for _, req := range []struct{ method, target, body string }{
				{http.MethodGet, base, ""},
				{http.MethodPut, base + "/rename", `{"name":"renamed"}`},
				{http.MethodDelete, base, ""},
			} {
				what := req.method + " " + req.target
				r := e.do(t, req.method, req.target, e.user, req.body)
				e.checkFuzz(t, what, r)
				if !routed || (id == "search" && req.method == http.MethodGet) {
					continue
				}
				want := http.StatusNotFound
				if chat.CheckID(id) != nil || utf8.RuneCountInString(id) > 200 {
					want = http.StatusUnprocessableEntity
				}
				if r.status != want {
					t.Errorf("%s: %s: status %d %s, want %d", e.name, what, r.status, r.body, want)
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
	envs := fuzzEnvs(f)
	f.Fuzz(func(t *testing.T, cursor string, encode bool) {
		if encode {
			cursor = base64.RawURLEncoding.EncodeToString([]byte(cursor))
		}
		target := chatPath + "/conversations?limit=2&cursor=" + url.QueryEscape(cursor)
		want := http.StatusUnprocessableEntity
		if _, err := chat.ParseCursor(cursor); (err == nil || cursor == "") && utf8.RuneCountInString(cursor) <= 512 {
			want = http.StatusOK
		}
		for _, e := range envs {
			r := e.do(t, http.MethodGet, target, e.user, "")
			e.checkFuzz(t, "GET "+target, r)
			if r.status != want {
				t.Errorf("%s: GET %s: status %d %s, want %d", e.name, target, r.status, r.body, want)
			}
		}
	})
}

// fuzzAnalyticsRoutes are the read routes under /api/v1/analytics.
var fuzzAnalyticsRoutes = append(append([]string{}, analyticsRoutes...),
	"/interactions", "/interactions/export", "/daily_counts", "/get_cats")

// FuzzAnalyticsQuery sends any raw query string to the analytics routes,
// as an admin: filters, dates, limits, cursors and formats in any bytes.
func FuzzAnalyticsQuery(f *testing.F) {
	for i, q := range []string{
		"catname=private", "catname=private&topic=billing&model=gpt-a", "catname=abc%00x", "catname=%FF",
		"catname=private&topic=%00&model=%FF&persona=%C3", "catname=private&questionid=%00&answerid=a%80",
		"catname=private&startDate=2024-01-01&endDate=2024-02-01", "catname=private&startDate=%00",
		"catname=private&endDate=2024-13-45", "catname=private&startDate=2024-03-01&endDate=2024-01-01",
		"catname=private&limit=-1", "catname=private&limit=99999999999999999999", "catname=private&cursor=%00",
		"catname=private&cursor=MTcxMDQ5MzIwMDAwMDAwMDAwMDox&limit=1", "catname=private&format=jsonl&limit=2",
		"catname=private&format=%00", "catname=private&topic=a;b&topic=%", "catname=private&catname=public",
		"", "%", "&&&=", "catname", "catname=private&topic=" + strings.Repeat("x", 300),
	} {
		f.Add(uint8(i), q)
	}
	envs := fuzzEnvs(f)
	f.Fuzz(func(t *testing.T, route uint8, query string) {
		target := prefix + fuzzAnalyticsRoutes[int(route)%len(fuzzAnalyticsRoutes)] + "?" + query
		for _, e := range envs {
			e.checkFuzz(t, "GET "+target, e.do(t, http.MethodGet, target, e.admin, ""))
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
	envs := fuzzEnvs(f)
	f.Fuzz(func(t *testing.T, body string) {
		for _, e := range envs {
			b := strings.ReplaceAll(body, "$CONV", e.conv)
			r := e.do(t, http.MethodPost, chatPath+"/chat", e.user, b)
			e.checkFuzz(t, "POST /chat "+b, r)
		}
	})
}
