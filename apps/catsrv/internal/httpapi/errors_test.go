package httpapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/errs"
)

// analyticsError is the spec §7 body.
func analyticsError(message string) map[string]any {
	return map[string]any{"error": "ANALYTICS-ERR-0-WAREHOUSE", "status": 500, "message": message}
}

// parseFailure is the text time.Parse gives for a bad date: the spec's
// message ends with it.
func parseFailure(t *testing.T, value string) string {
	t.Helper()
	_, err := time.Parse(analytics.DateLayout, value)
	if err == nil {
		t.Fatalf("%q parses", value)
	}
	return err.Error()
}

func TestSpecErrors(t *testing.T) {
	e := NewEnv(t)
	cases := []struct {
		name, query string
		want        map[string]any
	}{
		{"unknown CAT", "catname=nope", analyticsError(`CAT "nope" not found in configuration`)},
		{"bad startDate", "catname=private&startDate=2024-13-01",
			analyticsError("Invalid startDate format. Expected YYYY-MM-DD: " + parseFailure(t, "2024-13-01"))},
		{"startDate not a date", "catname=private&startDate=yesterday",
			analyticsError("Invalid startDate format. Expected YYYY-MM-DD: " + parseFailure(t, "yesterday"))},
		{"bad endDate", "catname=private&endDate=2024-1-5",
			analyticsError("Invalid endDate format. Expected YYYY-MM-DD: " + parseFailure(t, "2024-1-5"))},
		{"start after end", "catname=private&startDate=2024-02-01&endDate=2024-01-01", analyticsError("startDate must be before endDate")},
		{"start equals end", "catname=private&startDate=2024-02-01&endDate=2024-02-01", analyticsError("startDate must be before endDate")},
	}
	for _, route := range AnalyticsRoutes {
		for _, c := range cases {
			// The spec's errors come before access control: no token needed.
			for _, who := range []struct{ name, auth string }{{"anonymous", ""}, {"admin", Bearer(e.Admin)}} {
				t.Run(route+"/"+c.name+"/"+who.name, func(t *testing.T) {
					res := e.Get(t, AnalyticsPrefix+route+"?"+c.query, who.auth)
					if res.Status != http.StatusInternalServerError {
						t.Fatalf("status %d, want 500: %s", res.Status, res.Body)
					}
					AssertJSON(t, res.Body, c.want)
				})
			}
		}
	}
}

func TestMissingCatname(t *testing.T) {
	e := NewEnv(t)
	const want = `{"detail":[{"loc":["query","catname"],"msg":"field required","type":"value_error.missing"}]}`
	for _, route := range AnalyticsRoutes {
		for _, query := range []string{"", "?catname=", "?startDate=2024-01-01"} {
			t.Run(route+query, func(t *testing.T) {
				res := e.Get(t, AnalyticsPrefix+route+query, Bearer(e.Admin))
				if res.Status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", res.Status, res.Body)
				}
				AssertJSON(t, res.Body, want)
				if ct := res.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			})
		}
	}
}

// authError is the body of a 401 or 403 with the core's message.
func authError(status int, err error) map[string]any {
	code := map[int]string{401: "UNAUTHORIZED", 403: "FORBIDDEN"}[status]
	return map[string]any{"error": code, "status": status, "message": errs.PublicMessage(err, "")}
}

func TestAccess(t *testing.T) {
	e := NewEnv(t)
	forged := issueWith(t, "another-secret-of-at-least-32-bytes!!", Now, "admin")
	expired := issueWith(t, Secret, Now.Add(-2*time.Hour), "admin") // valid for an hour, two hours ago
	verifyErr := func(header string) error {
		_, err := e.Tokens.VerifyBearer(header)
		if err == nil {
			t.Fatalf("%q verifies", header)
		}
		return err
	}
	viewerClaims, err := e.Tokens.Verify(e.Viewer)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := auth.RequireAdmin(viewerClaims)

	cases := []struct {
		name   string
		cat    string
		auth   string
		status int
		want   map[string]any // nil: the success body is checked elsewhere
	}{
		{"private, no token", PrivateCat, "", 401, authError(401, auth.ErrNoCredentials)},
		{"private, not bearer", PrivateCat, "Basic YWxpY2U6c2VjcmV0", 401, authError(401, verifyErr("Basic YWxpY2U6c2VjcmV0"))},
		{"private, garbage token", PrivateCat, Bearer("garbage"), 401, authError(401, verifyErr(Bearer("garbage")))},
		{"private, forged token", PrivateCat, Bearer(forged), 401, authError(401, verifyErr(Bearer(forged)))},
		{"private, expired token", PrivateCat, Bearer(expired), 401, authError(401, verifyErr(Bearer(expired)))},
		{"private, non-admin", PrivateCat, Bearer(e.Viewer), 403, authError(403, forbidden)},
		{"private, admin", PrivateCat, Bearer(e.Admin), 200, nil},
		{"private, admin, lower-case scheme", PrivateCat, "bearer " + e.Admin, 200, nil},
		{"public, no token", PublicCat, "", 200, nil},
		{"public, garbage token", PublicCat, Bearer("garbage"), 200, nil},
		{"public, non-admin", PublicCat, Bearer(e.Viewer), 200, nil},
	}
	for _, route := range AnalyticsRoutes {
		for _, c := range cases {
			t.Run(route+"/"+c.name, func(t *testing.T) {
				res := e.Get(t, AnalyticsPrefix+route+"?catname="+c.cat, c.auth)
				if res.Status != c.status {
					t.Fatalf("status %d, want %d: %s", res.Status, c.status, res.Body)
				}
				if c.want != nil {
					AssertJSON(t, res.Body, c.want)
				}
				if got := res.Header.Get("WWW-Authenticate"); (c.status == 401) != (got == "Bearer") {
					t.Errorf("WWW-Authenticate %q with status %d", got, c.status)
				}
			})
		}
	}
}

func TestNoTokenServiceLocksPrivateCATs(t *testing.T) {
	e := NewEnv(t, WithoutTokens())
	res := e.Get(t, AnalyticsPrefix+"/all?catname="+PrivateCat, Bearer(e.Admin))
	if res.Status != 401 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if res = e.Get(t, AnalyticsPrefix+"/all?catname="+PublicCat, ""); res.Status != 200 {
		t.Errorf("public CAT: status %d: %s", res.Status, res.Body)
	}
	if res = e.Get(t, AnalyticsPrefix+"/get_cats", Bearer(e.Admin)); res.Status != 401 {
		t.Errorf("get_cats with a token no service verifies: status %d: %s", res.Status, res.Body)
	}
	res = e.Get(t, AnalyticsPrefix+"/get_cats", "")
	AssertJSON(t, res.Body, `{"cats":[{"name":"public","chat_mode":"agent","analytics_public":true,"retention_days":3650,"chat_retention_days":365}]}`)
}

// issueWith signs an admin-or-other token with another secret or clock.
func issueWith(t *testing.T, secret string, at time.Time, role string) string {
	t.Helper()
	svc, err := tokens.New([]byte(secret), "catsrv", "catsrv", clock.NewFixed(at))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := svc.Issue("mallory", role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestHostileInput(t *testing.T) {
	e := NewEnv(t)
	long := strings.Repeat("x", 100<<10)
	many := strings.Repeat("topic=a&", 9000)
	const drop = "%27%3B%20DROP%20TABLE%20interactions%3B%20--"
	cases := []struct {
		name, query string
		status      int
		want        any // the exact body; nil: compare with the reference (200)
		p           Params
	}{
		{"NUL in filter", "topic=%00", 200, nil, Params{Filters: analytics.Filters{Topics: []string{"\x00"}}}},
		{"invalid UTF-8 in filter", "model=%ff%fe", 200, nil, Params{Filters: analytics.Filters{Models: []string{"\xff\xfe"}}}},
		{"SQL in filter", "persona=" + drop, 200, nil, Params{Filters: analytics.Filters{Personas: []string{"'; DROP TABLE interactions; --"}}}},
		{"SQL in question id", "questionid=" + drop + "&questionid=%00", 200, nil,
			Params{Filters: analytics.Filters{QuestionIDs: []string{"'; DROP TABLE interactions; --", "\x00"}}}},
		{"100 kB filter", "topic=" + long, 422,
			`{"detail":[{"loc":["query","topic",0],"msg":"expected length <= 4096","type":"value_error"}]}`, Params{}},
		{"9k repeated filter values", many, 422,
			`{"detail":[{"loc":["query","topic"],"msg":"expected array length <= 100","type":"value_error"}]}`, Params{}},
		{"10k repeated filter values", strings.Repeat("topic=a&", 10000) + "topic=b", 422,
			`{"detail":[{"loc":["query"],"msg":"malformed query string: number of URL query parameters exceeded limit","type":"value_error"}]}`, Params{}},
		{"bad escape", "topic=%zz", 422,
			`{"detail":[{"loc":["query"],"msg":"malformed query string: invalid URL escape \"%zz\"","type":"value_error"}]}`, Params{}},
		{"semicolon separator", "topic=a;topic=b", 422,
			`{"detail":[{"loc":["query"],"msg":"malformed query string: invalid semicolon separator in query","type":"value_error"}]}`, Params{}},
		{"negative limit", "limit=-1", 422,
			`{"detail":[{"loc":["query","limit"],"msg":"expected number >= 0","type":"value_error"}]}`, Params{}},
		{"huge limit", "limit=100001", 422,
			`{"detail":[{"loc":["query","limit"],"msg":"expected number <= 100000","type":"value_error"}]}`, Params{}},
		{"limit beyond int64", "limit=99999999999999999999999", 422,
			`{"detail":[{"loc":["query","limit"],"msg":"value is not a valid integer","type":"type_error.integer"}]}`, Params{}},
		{"non-numeric limit", "limit=ten", 422,
			`{"detail":[{"loc":["query","limit"],"msg":"value is not a valid integer","type":"type_error.integer"}]}`, Params{}},
		{"100 kB date", "startDate=" + long, 422,
			`{"detail":[{"loc":["query","startDate"],"msg":"expected length <= 64","type":"value_error"}]}`, Params{}},
	}
	for _, c := range cases {
		for _, cat := range []struct{ name, auth string }{{PrivateCat, Bearer(e.Admin)}, {PublicCat, ""}} {
			t.Run(c.name+"/"+cat.name, func(t *testing.T) {
				res := e.Get(t, AnalyticsPrefix+"/all?catname="+cat.name+"&"+c.query, cat.auth)
				if res.Status != c.status {
					t.Fatalf("status %d, want %d: %.300s", res.Status, c.status, res.Body)
				}
				want := c.want
				if want == nil {
					p := c.p
					p.Cat = cat.name
					want = ResultMap(Reference(t, p))
				}
				AssertJSON(t, res.Body, want)
			})
		}
	}

	// catname itself: an unknown name is the spec's 500 (echoed quoted and
	// cut short), an absurdly long one a 422.
	names := []struct {
		name, query string
		status      int
		want        any
	}{
		{"NUL catname", "catname=%00", 500, analyticsError(`CAT "\x00" not found in configuration`)},
		{"invalid UTF-8 catname", "catname=%ff", 500, analyticsError(`CAT "\xff" not found in configuration`)},
		{"SQL catname", "catname=" + drop, 500, analyticsError(`CAT "'; DROP TABLE interactions; --" not found in configuration`)},
		{"long catname", "catname=" + strings.Repeat("a", 200), 500,
			analyticsError(`CAT "` + strings.Repeat("a", 64) + `..." not found in configuration`)},
		{"100 kB catname", "catname=" + long, 422,
			`{"detail":[{"loc":["query","catname"],"msg":"expected length <= 256","type":"value_error"}]}`},
	}
	for _, c := range names {
		t.Run(c.name, func(t *testing.T) {
			res := e.Get(t, AnalyticsPrefix+"/all?"+c.query, "")
			if res.Status != c.status {
				t.Fatalf("status %d, want %d: %.300s", res.Status, c.status, res.Body)
			}
			AssertJSON(t, res.Body, c.want)
		})
	}
}

func TestInternalErrorsStayInside(t *testing.T) {
	cause := errors.New(`pq: relation "interactions" does not exist: SELECT count(*) FROM interactions`)
	e := NewEnv(t, WithLog(FaultyLog{Err: cause}))
	for _, route := range AnalyticsRoutes {
		t.Run(route, func(t *testing.T) {
			res := e.Get(t, AnalyticsPrefix+route+"?catname="+PublicCat, "")
			if res.Status != 500 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			AssertJSON(t, res.Body, analyticsError("internal error"))
		})
	}
	if logs := e.Logs.String(); !strings.Contains(logs, "SELECT count(*) FROM interactions") {
		t.Errorf("the cause is not logged:\n%s", logs)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	e := NewEnv(t, WithLog(FaultyLog{Panic: true}))
	res := e.Get(t, AnalyticsPrefix+"/all?catname="+PublicCat, "")
	if res.Status != 500 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	AssertJSON(t, res.Body, analyticsError("internal error"))
	if strings.Contains(string(res.Body), "exploded") || strings.Contains(string(res.Body), "goroutine") {
		t.Errorf("panic details in the body: %s", res.Body)
	}
	panics := e.Logs.Lines(t, "panic serving request")
	if len(panics) != 1 || panics[0]["panic"] != "store exploded" || !strings.Contains(panics[0]["stack"].(string), "goroutine") {
		t.Errorf("panic not logged with its stack: %v", panics)
	}
	if reqs := e.Logs.Lines(t, "request"); len(reqs) != 1 || reqs[0]["status"] != float64(500) {
		t.Errorf("request line: %v", reqs)
	}
}

func TestUseSpecErrorsRestores(t *testing.T) {
	restore := httpapi.UseSpecErrors()
	detail := &huma.ErrorDetail{Message: "required query parameter is missing", Location: "query.catname"}
	if _, ok := huma.NewError(422, "validation failed", detail).(*huma.ErrorModel); ok {
		restore()
		t.Fatal("UseSpecErrors left huma's error model in place")
	}
	restore()
	if _, ok := huma.NewError(422, "validation failed", detail).(*huma.ErrorModel); !ok {
		t.Error("restore did not bring back huma's error model")
	}
}

// The spec's 500s for a caller's mistake (an unknown CAT, a bad date) are
// not server faults: their request line is a warning. A real failure
// stays an error, so that ERROR lines can page someone.
func TestRequestLogLevelTellsCallerMistakesFromFaults(t *testing.T) {
	e := NewEnv(t)
	for _, q := range []string{"catname=nope", "catname=" + PublicCat + "&startDate=2024-13-01", "catname=" + PublicCat + "&startDate=2024-03-01&endDate=2024-01-01"} {
		if res := e.Get(t, AnalyticsPrefix+"/all?"+q, Bearer(e.Admin)); res.Status != 500 {
			t.Fatalf("%s: status %d %s", q, res.Status, res.Body)
		}
	}
	for _, l := range e.Logs.Lines(t, "request") {
		if l["level"] != "WARN" || l["status"] != float64(500) {
			t.Errorf("a caller's mistake logged as %v", l)
		}
	}
	faulty := NewEnv(t, WithLog(FaultyLog{Err: errors.New("disk on fire")}))
	if res := faulty.Get(t, AnalyticsPrefix+"/all?catname="+PublicCat, ""); res.Status != 500 {
		t.Fatalf("status %d %s", res.Status, res.Body)
	}
	if reqs := faulty.Logs.Lines(t, "request"); len(reqs) != 1 || reqs[0]["level"] != "ERROR" {
		t.Errorf("a store failure's request line: %v", reqs)
	}
}
