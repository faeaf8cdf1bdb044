package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"

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

// serverFault reports whether a response is a server failure: a 5xx
// other than the 500 that spec §7 prescribes for an analytics caller's
// mistake (an unknown CAT, a malformed date), which names the mistake.
func serverFault(r response) bool {
	if r.status < http.StatusInternalServerError {
		return false
	}
	var b base.ErrorBody
	spec := r.status == http.StatusInternalServerError && json.Unmarshal(r.body, &b) == nil &&
		b.Code == base.AnalyticsErrorCode && b.Message != "internal error"
	return !spec
}

// checkClean fails the test when the response is a server failure or the
// log has an ERROR line.
func (e *sqlEnv) checkClean(t testing.TB, what string, r response) {
	t.Helper()
	if serverFault(r) {
		t.Errorf("%s: status %d %s", what, r.status, r.body)
	}
	if lines := e.errorLines(); len(lines) > 0 {
		t.Errorf("%s: ERROR log lines:\n%s", what, strings.Join(lines, ""))
	}
}

// TestUnstorableIDsAndCursorsAre422 holds item 4 of issue 10: a
// conversation id or a list cursor that no database can hold is malformed
// input (422) on every back end, never a 500 with an ERROR log line.
func TestUnstorableIDsAndCursorsAre422(t *testing.T) {
	for _, b := range sqlBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newSQLEnv(t, b)
			conv := chatPath + "/conversations/"
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
					{http.MethodGet, chatPath + "/conversations?cursor=" + cursorOf(c.text), "", http.StatusUnprocessableEntity},
					{http.MethodPost, chatPath + "/chat", `{"message":"hello","conversation_id":"` + jsonText(c.text) + `"}`, inBody},
				} {
					what := c.name + ": " + req.method + " " + req.target + " " + req.body
					r := e.do(t, req.method, req.target, e.user, req.body)
					if r.status != req.want {
						t.Errorf("%s: status %d %s, want %d", what, r.status, r.body, req.want)
					}
					e.checkClean(t, what, r)
				}
			}
			// A well-formed id that is no conversation of the caller is
			// still 404, and the caller's own conversation is untouched.
			if r := e.do(t, http.MethodGet, conv+"abcx", e.user, ""); r.status != http.StatusNotFound {
				t.Errorf("unknown id: %d %s", r.status, r.body)
			}
			if r := e.do(t, http.MethodGet, conv+e.conv, e.user, ""); r.status != http.StatusOK {
				t.Errorf("own conversation: %d %s", r.status, r.body)
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
	for _, b := range sqlBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newSQLEnv(t, b)
			for _, c := range unstorable {
				q, j := url.QueryEscape(c.text), jsonText(c.text)
				conv := chatPath + "/conversations/" + e.conv
				for _, req := range []struct{ method, target, body string }{
					{http.MethodGet, chatPath + "/conversations/search?q=" + q, ""},
					{http.MethodGet, chatPath + "/conversations/search?q=password+" + q, ""},
					{http.MethodGet, chatPath + "/conversations?cursor=" + q, ""},
					{http.MethodPut, conv + "/rename", `{"name":"` + j + `"}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"` + j + `"}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"hi","model":"` + j + `"}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"hi","context":{"topic":"` + j + `"}}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"hi","context":{"persona":"` + j + `"}}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"hi","context":{"` + j + `":"` + j + `"}}`},
					{http.MethodPost, chatPath + "/chat", `{"message":"hi","stream":true,"context":{"topic":"` + j + `"}}`},
					{http.MethodPost, chatPath + "/chat?catname=" + q, `{"message":"hi"}`},
					{http.MethodPost, authPrefix + "/memory", `{"preferences":{"` + j + `":1}}`},
					{http.MethodPost, authPrefix + "/memory", `{"preferences":{"persona":"` + j + `"}}`},
					{http.MethodGet, authPrefix + "/memory", ""},
					{http.MethodGet, prefix + "/all?catname=" + q, ""},
					{http.MethodGet, prefix + "/all_warehouse?catname=" + privateCat + "&topic=" + q + "&model=" + q, ""},
					{http.MethodGet, prefix + "/all?catname=" + privateCat + "&persona=" + q + "&questionid=" + q + "&answerid=" + q, ""},
					{http.MethodGet, prefix + "/questions?catname=" + privateCat + "&startDate=" + q, ""},
					{http.MethodGet, prefix + "/interactions?catname=" + privateCat + "&topic=" + q + "&cursor=" + q, ""},
					{http.MethodGet, prefix + "/daily_counts?catname=" + privateCat + "&model=" + q, ""},
					{http.MethodGet, prefix + "/interactions/export?catname=" + privateCat + "&persona=" + q, ""},
				} {
					what := c.name + ": " + req.method + " " + req.target
					auth := e.user
					if strings.HasPrefix(req.target, prefix) {
						auth = e.admin
					}
					e.checkClean(t, what, e.do(t, req.method, req.target, auth, req.body))
				}
			}
			if r := e.do(t, http.MethodGet, chatPath+"/conversations/"+e.conv, e.user, ""); r.status != http.StatusOK {
				t.Errorf("own conversation after the odd input: %d %s", r.status, r.body)
			}
		})
	}
}

// TestAuthRoutesStoreOddTextSafely sends unstorable text in the query
// parameters and the User-Agent of the login routes, which write the
// audit log: never a 5xx, never an ERROR line.
func TestAuthRoutesStoreOddTextSafely(t *testing.T) {
	for _, b := range sqlBackends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newSQLEnv(t, b)
			start := authPrefix + "/" + auth.ProviderA
			// A User-Agent longer than the 512 bytes kept, whose cut falls
			// inside a rune.
			long := "x" + strings.Repeat("é", 400)
			cases := append(unstorable, struct{ name, text string }{"long multibyte", long})
			for _, c := range cases {
				q := url.QueryEscape(c.text)
				r := e.do(t, http.MethodPost, start+"?catname="+q, "", "", "User-Agent: "+c.text)
				e.checkClean(t, c.name+": start with an odd catname", r)
				r = e.do(t, http.MethodPost, start, "", "", "User-Agent: "+c.text)
				e.checkClean(t, c.name+": start with an odd User-Agent", r)
				if r.status != http.StatusOK {
					t.Fatalf("%s: start: %d %s", c.name, r.status, r.body)
				}
				// The provider's refusal, with odd error text, audited.
				state, cookie := loginState(t, r)
				r = e.do(t, http.MethodGet, start+"/callback?state="+url.QueryEscape(state)+"&error="+q+"&error_description="+q, "", "",
					"User-Agent: "+c.text, "Cookie: "+cookie)
				e.checkClean(t, c.name+": callback with an odd error", r)
				if r.status != http.StatusUnauthorized {
					t.Errorf("%s: refused login: %d %s", c.name, r.status, r.body)
				}
				r = e.do(t, http.MethodGet, start+"/callback?state="+q+"&code="+q, "", "", "User-Agent: "+c.text, "Cookie: "+cookie)
				e.checkClean(t, c.name+": callback with an odd state", r)
			}
			// Every attempt was audited, its text stored as valid UTF-8
			// without NUL: odd bytes became U+FFFD, a long User-Agent was
			// cut before the rune that did not fit.
			events, err := e.audit.Events(t.Context(), auth.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			agents, reasons := map[string]int{}, map[string]int{}
			for _, ev := range events {
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
func loginState(t *testing.T, r response) (state, cookie string) {
	t.Helper()
	var body struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(body.AuthorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	res := http.Response{Header: r.header}
	for _, c := range res.Cookies() {
		if strings.HasPrefix(c.Name, stateCookieFor) {
			return u.Query().Get("state"), c.Name + "=" + c.Value
		}
	}
	t.Fatalf("no state cookie in %v", r.header)
	return "", ""
}
