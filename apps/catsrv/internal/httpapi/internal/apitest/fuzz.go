package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// FuzzEnvs builds one app per back end of SQLBackends for a fuzz target.
func FuzzEnvs(f *testing.F) []*SQLEnv {
	f.Helper()
	var out []*SQLEnv
	for _, b := range SQLBackends() {
		out = append(out, NewSQLEnv(f, b))
	}
	return out
}

// CheckFuzz is CheckClean with the back end named, and with the events
// of a streamed reply read too: an error event must not be a server
// failure either.
func (e *SQLEnv) CheckFuzz(t *testing.T, what string, r Response) {
	t.Helper()
	what = e.Name + ": " + what
	e.CheckClean(t, what, r)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/Event-stream") {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, len(r.Body)+1)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev base.ErrorBody
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Code != "" && ev.Status >= http.StatusInternalServerError {
			t.Errorf("%s: error Event %s", what, data)
		}
	}
}

// CheckClean fails the test when the response is a server failure or the
// log has an ERROR line.
func (e *SQLEnv) CheckClean(t testing.TB, what string, r Response) {
	t.Helper()
	if ServerFault(r) {
		t.Errorf("%s: status %d %s", what, r.Status, r.Body)
	}
	if lines := e.ErrorLines(); len(lines) > 0 {
		t.Errorf("%s: ERROR log Lines:\n%s", what, strings.Join(lines, ""))
	}
}

// ServerFault reports whether a response is a server failure: a 5xx
// other than the 500 that spec §7 prescribes for an analytics caller's
// mistake (an unknown CAT, a malformed date), which names the mistake.
func ServerFault(r Response) bool {
	if r.Status < http.StatusInternalServerError {
		return false
	}
	var b base.ErrorBody
	spec := r.Status == http.StatusInternalServerError && json.Unmarshal(r.Body, &b) == nil &&
		b.Code == base.AnalyticsErrorCode && b.Message != "internal error"
	return !spec
}
