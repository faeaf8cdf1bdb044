package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

const (
	privateCat = "private"
	publicCat  = "public"
	testSecret = "test-secret-of-at-least-32-bytes-for-hs256"
	prefix     = httpapi.AnalyticsPrefix
)

// analyticsRoutes are the eight routes that take catname.
var analyticsRoutes = []string{
	"/all_warehouse", "/all", "/all_legacy",
	"/metrics/topic_counts", "/metrics/model_counts", "/metrics/total_interactions",
	"/questions", "/answers",
}

var now = time.Date(2024, 3, 15, 9, 0, 0, 0, time.UTC)

func day(month time.Month, d int) time.Time { return time.Date(2024, month, d, 12, 0, 0, 0, time.UTC) }

// testLog is a small log with several topics, models, personas, repeated
// questions and answers, an explicit question id, a non-api event and two
// CATs.
func testLog() []analytics.Interaction {
	in := func(t time.Time, cat, kind, topic, model, persona, q, a string) analytics.Interaction {
		return analytics.Interaction{Time: t, Cat: cat, EventKind: kind, Topic: topic, Model: model, Persona: persona, Question: q, Answer: a}
	}
	explicit := in(day(2, 2), privateCat, "api", "shipping", "gpt-a", "formal", "Can I change my address?", "Yes, in settings.")
	explicit.QuestionID, explicit.AnswerID = "q-address", "a-address"
	return []analytics.Interaction{
		in(day(1, 10), privateCat, "api", "billing", "gpt-a", "formal", "How do I pay?", "Use the portal."),
		in(day(1, 11), privateCat, "api", "billing", "gpt-a", "casual", "How do I pay?", "Use the portal."),
		in(day(1, 12), privateCat, "api", "billing", "gpt-b", "formal", "Refund please", "Refund issued."),
		in(day(1, 20), privateCat, "api", "shipping", "gpt-b", "casual", "Where is my parcel?", "It is on its way."),
		explicit,
		in(day(2, 10), privateCat, "api", "account", "gpt-c", "casual", "Reset password", "Click forgot password."),
		in(day(2, 12), privateCat, "api", "billing", "gpt-a", "formal", "How do I pay?", "Pay by card."),
		in(day(2, 15), privateCat, "feedback", "billing", "gpt-a", "formal", "How do I pay?", "Use the portal."),
		in(day(1, 15), publicCat, "api", "general", "gpt-a", "formal", "Hello", "Hi!"),
		in(day(2, 1), publicCat, "api", "general", "gpt-b", "casual", "Hello", "Hi!"),
		in(day(3, 1), publicCat, "api", "weather", "gpt-b", "casual", "Will it rain?", "Probably."),
	}
}

// normalized is the log as the store keeps it: what the reference counts.
func normalized() []analytics.Interaction {
	var out []analytics.Interaction
	for _, i := range testLog() {
		out = append(out, i.Normalize())
	}
	return out
}

func testCats() *memstore.Cats {
	private := catconfig.Defaults(privateCat)
	public := catconfig.Defaults(publicCat)
	public.Chat.ChatMode = catconfig.ModeAgent
	public.Security.Analytics.Public = true
	return memstore.NewCats(private, public)
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the JSON log lines whose msg is msg.
func (b *syncBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// env is a server over the test log with its tokens and log.
type env struct {
	handler http.Handler
	tokens  *tokens.Service
	logs    *syncBuffer
	admin   string
	viewer  string
}

type envOption func(*httpapi.Deps, *ports.InteractionLog)

// withLog serves from another interaction log (a failing one).
func withLog(l ports.InteractionLog) envOption {
	return func(_ *httpapi.Deps, log *ports.InteractionLog) { *log = l }
}

// withReady sets the readiness check.
func withReady(f func(context.Context) error) envOption {
	return func(d *httpapi.Deps, _ *ports.InteractionLog) { d.Ready = f }
}

// withoutTokens serves without a token service.
func withoutTokens() envOption {
	return func(d *httpapi.Deps, _ *ports.InteractionLog) { d.Tokens = nil }
}

// newEnv builds the HTTP app over the test log and makes huma's errors
// the spec's for the duration of the test.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	clk := clock.NewFixed(now)
	store := memstore.New()
	if _, err := store.Append(context.Background(), analytics.Each(testLog())); err != nil {
		t.Fatal(err)
	}
	tok, err := tokens.New([]byte(testSecret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	deps := httpapi.Deps{Tokens: tok, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	var log ports.InteractionLog = store
	for _, o := range opts {
		o(&deps, &log)
	}
	deps.Reporter = reporter.New(testCats(), log, log, clk)
	_, h := httpapi.New(deps)
	e := &env{handler: h, tokens: tok, logs: logs}
	e.admin = e.issue(t, "alice", "admin")
	e.viewer = e.issue(t, "bob", "viewer")
	return e
}

func (e *env) issue(t *testing.T, subject, role string) string {
	t.Helper()
	tok, _, err := e.tokens.Issue(subject, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// response is what a request got.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get requests target (path and raw query) with an Authorization header
// when auth is not empty.
func (e *env) get(t *testing.T, target, auth string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	res := rec.Result()
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func bearer(token string) string { return "Bearer " + token }

// assertJSON checks that got is JSON equal to want (a value to marshal, or
// raw JSON as a string).
func assertJSON(t *testing.T, got []byte, want any) {
	t.Helper()
	wantJSON, ok := want.(string)
	if !ok {
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON = string(b)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(wantJSON), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body mismatch\n got: %s\nwant: %s", got, wantJSON)
	}
}

// keys returns the sorted top-level keys of a JSON object.
func keys(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, body)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// faultyLog is an interaction log whose counts fail or panic, for the
// paths no real store takes on demand.
type faultyLog struct {
	err   error
	panic bool
}

func (f faultyLog) Append(context.Context, iter.Seq2[analytics.Interaction, error]) (int, error) {
	return 0, f.err
}

func (f faultyLog) Answer(context.Context, analytics.Query, analytics.Parts) (analytics.Counts, error) {
	if f.panic {
		panic("store exploded")
	}
	return analytics.Counts{}, f.err
}
