package analyticsapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// The CATs of the ingestion tests: one private, one public.
const (
	ingestCat = "feed"
	otherCat  = "open"
)

const ingestSecret = "test-secret-of-at-least-32-bytes-for-hs256"

// ingestEnv is the HTTP app served on a real listener over one back end,
// wired as serve wires it: ingestion into the store, which tells the
// column index of each commit (SQL back ends),
// /all from the log, /all_warehouse and the metrics from the index.
type ingestEnv struct {
	url    string
	tokens *tokens.Service
	admin  string
}

// ingestBackends are memory, SQLite and, when configured, PostgreSQL.
func ingestBackends() []string {
	out := []string{"memory", "SQLite"}
	if os.Getenv(sqltest.PostgresEnv) != "" || os.Getenv("CI") == "true" {
		out = append(out, "PostgreSQL")
	}
	return out
}

func newIngestEnv(t testing.TB, backend string, limits analyticsapi.IngestLimits) *ingestEnv {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	clk := clock.NewFixed(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	private := catconfig.Defaults(ingestCat)
	public := catconfig.Defaults(otherCat)
	public.Security.Analytics.Public = true
	cats := memstore.NewCats(private, public)
	var (
		log     ports.InteractionLog
		rollups ports.RollupStore
	)
	switch backend {
	case "memory":
		m := memstore.New()
		log, rollups = m, m
	default:
		dsn := sqltest.SQLiteDSN(t)
		if backend == "PostgreSQL" {
			dsn = sqltest.PostgresDSN(t)
		}
		store := sqltest.Open(t, dsn)
		idx, err := colindex.Build(t.Context(), store)
		if err != nil {
			t.Fatal(err)
		}
		store.TellCommits(idx.Hold)
		log, rollups = store, idx
	}
	tok, err := tokens.New([]byte(ingestSecret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	_, h := httpapi.New(httpapi.Deps{
		Reporter: reporter.New(cats, log, rollups, clk), Tokens: tok,
		Logger: slog.New(slog.DiscardHandler), Ingest: log, IngestLimits: limits,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &ingestEnv{url: srv.URL, tokens: tok}
	e.admin = e.bearer(t, func() (string, auth.Claims, error) { return tok.Issue("root", auth.RoleAdmin, time.Hour) })
	return e
}

func (e *ingestEnv) bearer(t testing.TB, issue func() (string, auth.Claims, error)) string {
	t.Helper()
	tok, _, err := issue()
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok
}

func (e *ingestEnv) ingestToken(t *testing.T, cats ...string) string {
	return e.bearer(t, func() (string, auth.Claims, error) { return e.tokens.IssueIngest("feeder", cats, time.Hour) })
}

type reply struct {
	status int
	body   []byte
}

func (e *ingestEnv) do(t *testing.T, method, target, authz, contentType string, body io.Reader) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+target, body)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{res.StatusCode, b}
}

func (e *ingestEnv) post(t *testing.T, cat, authz, contentType, body string) reply {
	t.Helper()
	return e.do(t, http.MethodPost, analyticsapi.Prefix+"/interactions?catname="+cat, authz, contentType, strings.NewReader(body))
}

// ingested decodes a 200 answer.
func ingested(t *testing.T, r reply) analyticsapi.IngestBody {
	t.Helper()
	var b analyticsapi.IngestBody
	if r.status != http.StatusOK || json.Unmarshal(r.body, &b) != nil {
		t.Fatalf("ingest answered %d %s", r.status, r.body)
	}
	return b
}

// totals are what every analytics route reports as the CAT's total.
func (e *ingestEnv) totals(t *testing.T, cat string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, route := range []string{"/all", "/all_warehouse", "/metrics/total_interactions"} {
		r := e.do(t, http.MethodGet, analyticsapi.Prefix+route+"?catname="+cat, e.admin, "", nil)
		var b struct {
			Total int64 `json:"total_interactions"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &b) != nil {
			t.Fatalf("%s answered %d %s", route, r.status, r.body)
		}
		out[route] = b.Total
	}
	return out
}

func (e *ingestEnv) expectTotal(t *testing.T, cat string, want int64) {
	t.Helper()
	for route, got := range e.totals(t, cat) {
		if got != want {
			t.Errorf("%s reports %d interactions of %s, want %d", route, got, cat, want)
		}
	}
}

// line is one interaction of the import format; id "" leaves
// interaction_id out, cat "" leaves cat out.
func line(k int, cat, id string) string {
	m := map[string]string{
		"time": time.Date(2025, 5, 1+k%28, 10, 0, k%60, 0, time.UTC).Format(time.RFC3339), "event_kind": "api",
		"question": fmt.Sprintf("question %d", k), "answer": fmt.Sprintf("answer %d", k%7),
		"topic": fmt.Sprintf("topic %d", k%5), "model": "model-a", "persona": "student",
	}
	if cat != "" {
		m["cat"] = cat
	}
	if id != "" {
		m["interaction_id"] = id
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func lines(n int, cat, idPrefix string) []string {
	out := make([]string, n)
	for k := range out {
		id := ""
		if idPrefix != "" {
			id = fmt.Sprintf("%s-%d", idPrefix, k)
		}
		out[k] = line(k, cat, id)
	}
	return out
}

func TestIngestAllOrNothing(t *testing.T) {
	for _, backend := range ingestBackends() {
		t.Run(backend, func(t *testing.T) {
			e := newIngestEnv(t, backend, analyticsapi.IngestLimits{})
			bad := strings.Replace(line(1, ingestCat, ""), `,"topic":"topic 1"`, "", 1)
			body := strings.Join([]string{line(0, ingestCat, "a"), bad, "", line(2, otherCat, ""), line(3, "", "b"),
				`{"time":"yesterday"}`}, "\n")
			r := e.post(t, ingestCat, e.admin, "application/x-ndjson", body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("a batch with invalid lines answered %d %s, want 422", r.status, r.body)
			}
			var v base.ValidationError
			if err := json.Unmarshal(r.body, &v); err != nil {
				t.Fatal(err)
			}
			var locs []string
			for _, d := range v.Detail {
				locs = append(locs, fmt.Sprint(d.Loc...))
				if d.Type != "value_error" || !strings.HasPrefix(d.Msg, "line ") {
					t.Errorf("entry %+v", d)
				}
			}
			if got, want := strings.Join(locs, "|"), "body2topic|body4cat|body6time"; got != want {
				t.Errorf("422 names %q, want %q (%s)", got, want, r.body)
			}
			e.expectTotal(t, ingestCat, 0)
			e.expectTotal(t, otherCat, 0)

			// The same batch made valid: stored whole, seen at once by every route.
			body = strings.Join([]string{line(0, ingestCat, "a"), "", line(3, "", "b"), line(4, ingestCat, "")}, "\n") + "\n"
			if got := ingested(t, e.post(t, ingestCat, e.admin, "application/x-ndjson; charset=utf-8", body)); got != (analyticsapi.IngestBody{Lines: 3, Stored: 3}) {
				t.Errorf("answer %+v, want 3 lines stored", got)
			}
			e.expectTotal(t, ingestCat, 3)

			// A JSON array, with an invalid element: nothing; then valid.
			r = e.post(t, ingestCat, e.admin, "application/json", "["+line(5, "", "c")+`,{"time":1}]`)
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), `"loc":["body",2,"time"]`) {
				t.Errorf("array with a bad element answered %d %s", r.status, r.body)
			}
			r = e.post(t, ingestCat, e.admin, "application/json", "["+line(5, "", "c")+","+line(0, ingestCat, "a")+"]")
			if got := ingested(t, r); got != (analyticsapi.IngestBody{Lines: 2, Stored: 1, AlreadyStored: 1}) {
				t.Errorf("array answer %+v, want 1 stored, 1 already there", got)
			}
			e.expectTotal(t, ingestCat, 4)
			e.expectTotal(t, otherCat, 0)
		})
	}
}

func TestIngestConcurrentRetriesStoreOnce(t *testing.T) {
	for _, backend := range ingestBackends() {
		t.Run(backend, func(t *testing.T) {
			e := newIngestEnv(t, backend, analyticsapi.IngestLimits{})
			const size, retries = 400, 6
			body := strings.Join(lines(size, ingestCat, "retry"), "\n")
			answers := make([]reply, retries)
			var wg sync.WaitGroup
			for k := range retries {
				wg.Go(func() { answers[k] = e.post(t, ingestCat, e.admin, "application/x-ndjson", body) })
			}
			wg.Wait()
			stored := 0
			for k, r := range answers {
				got := ingested(t, r)
				if got.Lines != size || got.Stored+got.AlreadyStored != size {
					t.Errorf("answer %d: %+v, want %d lines, stored + already_stored = %d", k, got, size, size)
				}
				stored += got.Stored
			}
			if stored != size {
				t.Errorf("the %d concurrent requests stored %d interactions together, want %d", retries, stored, size)
			}
			e.expectTotal(t, ingestCat, size)
			// One more retry, later: nothing new.
			if got := ingested(t, e.post(t, ingestCat, e.admin, "application/x-ndjson", body)); got.Stored != 0 || got.AlreadyStored != size {
				t.Errorf("a late retry: %+v", got)
			}
			e.expectTotal(t, ingestCat, size)
		})
	}
}

func TestIngestRoleLimits(t *testing.T) {
	e := newIngestEnv(t, "memory", analyticsapi.IngestLimits{})
	feeder := e.ingestToken(t, ingestCat)
	viewer := e.bearer(t, func() (string, auth.Claims, error) { return e.tokens.Issue("bob", "viewer", time.Hour) })
	body := line(1, "", "")
	for _, c := range []struct {
		name, cat, authz string
		want             int
	}{
		{"ingest token, its CAT", ingestCat, feeder, http.StatusOK},
		{"ingest token, another CAT", otherCat, feeder, http.StatusForbidden},
		{"ingest token, unknown CAT", "nosuchcat", feeder, http.StatusForbidden},
		{"admin, another CAT", otherCat, e.admin, http.StatusOK},
		{"admin, unknown CAT", "nosuchcat", e.admin, http.StatusNotFound},
		{"viewer", ingestCat, viewer, http.StatusForbidden},
		{"no token", ingestCat, "", http.StatusUnauthorized},
		{"bad token", ingestCat, "Bearer nope", http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.post(t, c.cat, c.authz, "application/x-ndjson", strings.Replace(body, `"event_kind"`, `"cat":"`+c.cat+`","event_kind"`, 1))
			if r.status != c.want {
				t.Errorf("answered %d %s, want %d", r.status, r.body, c.want)
			}
		})
	}
	// An ingest token does nothing else, not even what anyone may do.
	for _, target := range []string{
		"/all?catname=" + ingestCat, "/all?catname=" + otherCat, "/metrics/total_interactions?catname=" + otherCat,
		"/get_cats", "/interactions?catname=" + ingestCat, "/daily_counts?catname=" + otherCat,
	} {
		r := e.do(t, http.MethodGet, analyticsapi.Prefix+target, feeder, "", nil)
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), `"error":"FORBIDDEN"`) {
			t.Errorf("GET %s with an ingest token: %d %s, want 403", target, r.status, r.body)
		}
	}
	for _, target := range []string{"/api/v1/cat/conversations"} {
		if r := e.do(t, http.MethodGet, target, feeder, "", nil); r.status != http.StatusForbidden {
			t.Errorf("GET %s with an ingest token: %d %s, want 403", target, r.status, r.body)
		}
	}
	// The public CAT still answers without a token, and admins.
	if r := e.do(t, http.MethodGet, analyticsapi.Prefix+"/all?catname="+otherCat, "", "", nil); r.status != http.StatusOK {
		t.Errorf("public /all without a token: %d", r.status)
	}
	e.expectTotal(t, ingestCat, 1)
	e.expectTotal(t, otherCat, 1)
}

// slowReader hides a body's length, so it goes chunked.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) { return s.r.Read(p) }

func TestIngestLimits(t *testing.T) {
	for _, backend := range ingestBackends()[:2] {
		t.Run(backend, func(t *testing.T) {
			e := newIngestEnv(t, backend, analyticsapi.IngestLimits{MaxBytes: 4096, MaxLines: 5})
			five := strings.Join(lines(5, ingestCat, "x"), "\n")
			if got := ingested(t, e.post(t, ingestCat, e.admin, "application/x-ndjson", five+"\n\n\n")); got.Stored != 5 {
				t.Fatalf("five lines (the limit) and blank lines: %+v", got)
			}
			six := strings.Join(lines(6, ingestCat, "y"), "\n")
			r := e.post(t, ingestCat, e.admin, "application/x-ndjson", six)
			if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "more than 5 interactions") {
				t.Errorf("six lines: %d %s, want 413 naming the limit", r.status, r.body)
			}
			big := line(0, ingestCat, "z") + "\n" + strings.Repeat(" ", 4096)
			for name, body := range map[string]io.Reader{"with a length": strings.NewReader(big), "chunked": slowReader{strings.NewReader(big)}} {
				r := e.do(t, http.MethodPost, analyticsapi.Prefix+"/interactions?catname="+ingestCat, e.admin, "application/x-ndjson", body)
				if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "larger than 4096 bytes") {
					t.Errorf("%s, over 4096 bytes: %d %s, want 413 naming the limit", name, r.status, r.body)
				}
			}
			for _, ct := range []string{"", "text/plain", "application/xml"} {
				if r := e.post(t, ingestCat, e.admin, ct, five); r.status != http.StatusUnsupportedMediaType {
					t.Errorf("Content-Type %q: %d %s, want 415", ct, r.status, r.body)
				}
			}
			e.expectTotal(t, ingestCat, 5)
		})
	}
}

// TestIngestWithoutLog: a server wired without an ingestion log says so.
func TestIngestWithoutLog(t *testing.T) {
	t.Cleanup(httpapi.UseSpecErrors())
	tok, err := tokens.New([]byte(ingestSecret), "catsrv", "catsrv", clock.System{})
	if err != nil {
		t.Fatal(err)
	}
	m := memstore.New()
	_, h := httpapi.New(httpapi.Deps{Reporter: reporter.New(memstore.NewCats(catconfig.Defaults(ingestCat)), m, m, clock.System{}), Tokens: tok,
		Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &ingestEnv{url: srv.URL, tokens: tok}
	e.admin = e.bearer(t, func() (string, auth.Claims, error) { return tok.Issue("root", auth.RoleAdmin, time.Hour) })
	if r := e.post(t, ingestCat, e.admin, "application/x-ndjson", line(0, ingestCat, "")); r.status != http.StatusServiceUnavailable {
		t.Errorf("answered %d %s, want 503", r.status, r.body)
	}
}
