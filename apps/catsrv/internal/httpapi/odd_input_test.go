package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/auth"
)

// Text no back end stores: a NUL byte (PostgreSQL refuses it in text;
// SQLite cuts a statement at it) and bytes that are not UTF-8 (PostgreSQL
// refuses them).
var unstorable = []struct{ name, text string }{
	{"NUL", "abc\x00x"},
	{"invalid UTF-8", "abc\xffx"},
	{"lone continuation byte", "\x80"},
	{"truncated rune", "caf\xc3"},
}

// cursorOf is a cursor of the conversation list naming id, as the
// service encodes them.
func cursorOf(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("1710493200000000000:" + id))
}

// TestUnstorableIDsAndCursorsAre422 holds item 4 of issue 10: a
// conversation id or a list cursor that no database can hold is malformed
// input (422) on every back end, never a 500 with an ERROR log line.
func TestUnstorableIDsAndCursorsAre422(t *testing.T) {
	for _, b := range SQLBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := NewSQLEnv(t, b)
			conv := ChatPath + "/conversations/"
			for _, c := range unstorable {
				id := url.PathEscape(c.text)
				// A JSON body's strings are decoded with bytes that are not
				// UTF-8 replaced by U+FFFD: such an id is then well formed,
				// and no conversation's.
				inBody := http.StatusNotFound
				if strings.Contains(c.text, "\x00") {
					inBody = http.StatusUnprocessableEntity
				}
				for _, req := range []struct {
					method, target, body string
					want                 int
				}{
					{http.MethodGet, conv + id, "", http.StatusUnprocessableEntity},
					{http.MethodDelete, conv + id, "", http.StatusUnprocessableEntity},
					{http.MethodPut, conv + id + "/rename", `{"name":"renamed"}`, http.StatusUnprocessableEntity},
					{http.MethodGet, ChatPath + "/conversations?cursor=" + cursorOf(c.text), "", http.StatusUnprocessableEntity},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hello","conversation_id":"` + jsonText(c.text) + `"}`, inBody},
				} {
					what := c.name + ": " + req.method + " " + req.target + " " + req.body
					r := e.Do(t, req.method, req.target, e.User, req.body)
					if r.Status != req.want {
						t.Errorf("%s: status %d %s, want %d", what, r.Status, r.Body, req.want)
					}
					e.CheckClean(t, what, r)
				}
			}
			// A well-formed id that is no conversation of the caller is
			// still 404, and the caller's own conversation is untouched.
			if r := e.Do(t, http.MethodGet, conv+"abcx", e.User, ""); r.Status != http.StatusNotFound {
				t.Errorf("unknown id: %d %s", r.Status, r.Body)
			}
			if r := e.Do(t, http.MethodGet, conv+e.Conv, e.User, ""); r.Status != http.StatusOK {
				t.Errorf("own conversation: %d %s", r.Status, r.Body)
			}
		})
	}
}

// jsonText writes s as the inside of a JSON string, keeping bytes that
// are not UTF-8 raw (encoding/json would replace them).
func jsonText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestUnstorableTextNeverFailsTheStore sends unstorable text everywhere a
// client string reaches a store: answers are 4xx or success (the text
// stored safely), never 5xx, and nothing is logged at ERROR.
func TestUnstorableTextNeverFailsTheStore(t *testing.T) {
	for _, b := range SQLBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := NewSQLEnv(t, b)
			for _, c := range unstorable {
				q, j := url.QueryEscape(c.text), jsonText(c.text)
				conv := ChatPath + "/conversations/" + e.Conv
				for _, req := range []struct{ method, target, body string }{
					{http.MethodGet, ChatPath + "/conversations/search?q=" + q, ""},
					{http.MethodGet, ChatPath + "/conversations/search?q=password+" + q, ""},
					{http.MethodGet, ChatPath + "/conversations?cursor=" + q, ""},
					{http.MethodPut, conv + "/rename", `{"name":"` + j + `"}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"` + j + `"}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hi","model":"` + j + `"}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hi","context":{"topic":"` + j + `"}}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hi","context":{"persona":"` + j + `"}}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hi","context":{"` + j + `":"` + j + `"}}`},
					{http.MethodPost, ChatPath + "/chat", `{"message":"hi","stream":true,"context":{"topic":"` + j + `"}}`},
					{http.MethodPost, ChatPath + "/chat?catname=" + q, `{"message":"hi"}`},
					{http.MethodPost, AuthPrefix + "/memory", `{"preferences":{"` + j + `":1}}`},
					{http.MethodPost, AuthPrefix + "/memory", `{"preferences":{"persona":"` + j + `"}}`},
					{http.MethodGet, AuthPrefix + "/memory", ""},
					{http.MethodGet, AnalyticsPrefix + "/all?catname=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/all_warehouse?catname=" + PrivateCat + "&topic=" + q + "&model=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/all?catname=" + PrivateCat + "&persona=" + q + "&questionid=" + q + "&answerid=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/questions?catname=" + PrivateCat + "&startDate=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/interactions?catname=" + PrivateCat + "&topic=" + q + "&cursor=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/daily_counts?catname=" + PrivateCat + "&model=" + q, ""},
					{http.MethodGet, AnalyticsPrefix + "/interactions/export?catname=" + PrivateCat + "&persona=" + q, ""},
				} {
					what := c.name + ": " + req.method + " " + req.target
					auth := e.User
					if strings.HasPrefix(req.target, AnalyticsPrefix) {
						auth = e.Admin
					}
					e.CheckClean(t, what, e.Do(t, req.method, req.target, auth, req.body))
				}
			}
			if r := e.Do(t, http.MethodGet, ChatPath+"/conversations/"+e.Conv, e.User, ""); r.Status != http.StatusOK {
				t.Errorf("own conversation after the odd input: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestAuthRoutesStoreOddTextSafely sends unstorable text in the query
// parameters and the User-Agent of the login routes, which write the
// audit log: never a 5xx, never an ERROR line.
func TestAuthRoutesStoreOddTextSafely(t *testing.T) {
	for _, b := range SQLBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := NewSQLEnv(t, b)
			start := AuthPrefix + "/" + auth.ProviderA
			// A User-Agent longer than the 512 bytes kept, whose cut falls
			// inside a rune.
			long := "x" + strings.Repeat("é", 400)
			cases := append(unstorable, struct{ name, text string }{"long multibyte", long})
			for _, c := range cases {
				q := url.QueryEscape(c.text)
				r := e.Do(t, http.MethodPost, start+"?catname="+q, "", "", "User-Agent: "+c.text)
				e.CheckClean(t, c.name+": start with an odd catname", r)
				r = e.Do(t, http.MethodPost, start, "", "", "User-Agent: "+c.text)
				e.CheckClean(t, c.name+": start with an odd User-Agent", r)
				if r.Status != http.StatusOK {
					t.Fatalf("%s: start: %d %s", c.name, r.Status, r.Body)
				}
				// The provider's refusal, with odd error text, audited.
				state, cookie := loginState(t, r)
				r = e.Do(t, http.MethodGet, start+"/callback?state="+url.QueryEscape(state)+"&error="+q+"&error_description="+q, "", "",
					"User-Agent: "+c.text, "Cookie: "+cookie)
				e.CheckClean(t, c.name+": callback with an odd error", r)
				if r.Status != http.StatusUnauthorized {
					t.Errorf("%s: refused login: %d %s", c.name, r.Status, r.Body)
				}
				r = e.Do(t, http.MethodGet, start+"/callback?state="+q+"&code="+q, "", "", "User-Agent: "+c.text, "Cookie: "+cookie)
				e.CheckClean(t, c.name+": callback with an odd state", r)
			}
			// Every attempt was audited, its text stored as valid UTF-8
			// without NUL: odd bytes became U+FFFD, a long User-Agent was
			// cut before the rune that did not fit.
			Events, err := e.Audit.Events(t.Context(), auth.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			agents, reasons := map[string]int{}, map[string]int{}
			for _, ev := range Events {
				if !utf8.ValidString(ev.UserAgent+ev.Reason) || strings.ContainsRune(ev.UserAgent+ev.Reason, 0) {
					t.Errorf("audit event %+v holds text that is not storable", ev)
				}
				agents[ev.UserAgent]++
				if ev.Kind == auth.AuditLoginFailure {
					reasons[ev.Reason]++
				}
			}
			for _, c := range cases {
				want := strings.ToValidUTF8(strings.ReplaceAll(c.text, "\x00", "\uFFFD"), "\uFFFD")
				if c.text == long {
					want = "x" + strings.Repeat("é", 255)
				}
				if agents[want] < 3 { // a start and two callbacks
					t.Errorf("%s: %d audit events with the User-Agent %q, want at least 3; have %v", c.name, agents[want], want, agents)
				}
			}
			if len(reasons) == 0 {
				t.Error("no login failure audited")
			}
		})
	}
}

// loginState returns the state a start response sent to the provider and
// its state cookie as a Cookie header value.
func loginState(t *testing.T, r Response) (state, cookie string) {
	t.Helper()
	var body struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(body.AuthorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	res := http.Response{Header: r.Header}
	for _, c := range res.Cookies() {
		if strings.HasPrefix(c.Name, StateCookieFor) {
			return u.Query().Get("state"), c.Name + "=" + c.Value
		}
	}
	t.Fatalf("no state cookie in %v", r.Header)
	return "", ""
}
