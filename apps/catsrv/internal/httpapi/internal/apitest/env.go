// Package apitest holds the fixtures of the HTTP app's tests: the app over
// memory or SQL stores, a chat client, fake identity providers and model
// service, and the checks of the fuzz targets. Only tests import it.
package apitest

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

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// The CATs of the analytics tests, the secret of their tokens and the
// analytics routes' prefix.
const (
	PrivateCat      = "private"
	PublicCat       = "public"
	Secret          = "test-secret-of-at-least-32-bytes-for-hs256"
	AnalyticsPrefix = analyticsapi.Prefix
)

// AnalyticsRoutes are the eight routes that take catname.
var AnalyticsRoutes = []string{
	"/all_warehouse", "/all", "/all_legacy",
	"/metrics/topic_counts", "/metrics/model_counts", "/metrics/total_interactions",
	"/questions", "/answers",
}

// Now is the time of the fixed clock of Env.
var Now = time.Date(2024, 3, 15, 9, 0, 0, 0, time.UTC)

// Day is noon UTC of a day of 2024.
func Day(month time.Month, d int) time.Time { return time.Date(2024, month, d, 12, 0, 0, 0, time.UTC) }

// SampleLog is a small log with several topics, models, personas, repeated
// questions and answers, an explicit question id, a non-api event and two
// CATs.
func SampleLog() []analytics.Interaction {
	in := func(t time.Time, cat, kind, topic, model, persona, q, a string) analytics.Interaction {
		return analytics.Interaction{Time: t, Cat: cat, EventKind: kind, Topic: topic, Model: model, Persona: persona, Question: q, Answer: a}
	}
	explicit := in(Day(2, 2), PrivateCat, "api", "shipping", "gpt-a", "formal", "Can I change my address?", "Yes, in settings.")
	explicit.QuestionID, explicit.AnswerID = "q-address", "a-address"
	return []analytics.Interaction{
		in(Day(1, 10), PrivateCat, "api", "billing", "gpt-a", "formal", "How do I pay?", "Use the portal."),
		in(Day(1, 11), PrivateCat, "api", "billing", "gpt-a", "casual", "How do I pay?", "Use the portal."),
		in(Day(1, 12), PrivateCat, "api", "billing", "gpt-b", "formal", "Refund please", "Refund issued."),
		in(Day(1, 20), PrivateCat, "api", "shipping", "gpt-b", "casual", "Where is my parcel?", "It is on its way."),
		explicit,
		in(Day(2, 10), PrivateCat, "api", "account", "gpt-c", "casual", "Reset password", "Click forgot password."),
		in(Day(2, 12), PrivateCat, "api", "billing", "gpt-a", "formal", "How do I pay?", "Pay by card."),
		in(Day(2, 15), PrivateCat, "feedback", "billing", "gpt-a", "formal", "How do I pay?", "Use the portal."),
		in(Day(1, 15), PublicCat, "api", "general", "gpt-a", "formal", "Hello", "Hi!"),
		in(Day(2, 1), PublicCat, "api", "general", "gpt-b", "casual", "Hello", "Hi!"),
		in(Day(3, 1), PublicCat, "api", "weather", "gpt-b", "casual", "Will it rain?", "Probably."),
	}
}

// Normalized is the log as the store keeps it: what the reference counts.
func Normalized() []analytics.Interaction {
	var out []analytics.Interaction
	for _, i := range SampleLog() {
		out = append(out, i.Normalize())
	}
	return out
}

// SampleCats are the CATs of SampleLog: PrivateCat, and PublicCat with
// public analytics, the agent mode and retention keys (no job deletes
// anything here).
func SampleCats() *memstore.Cats {
	private := catconfig.Defaults(PrivateCat)
	public := catconfig.Defaults(PublicCat)
	public.Chat.ChatMode = catconfig.ModeAgent
	public.Security.Analytics.Public = true
	public.Analytics.RetentionDays, public.ChatLog.RetentionDays = 3650, 365
	return memstore.NewCats(private, public)
}

// SyncBuffer is a log sink safe for the server's goroutines.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the JSON log lines whose msg is msg.
func (b *SyncBuffer) Lines(t *testing.T, msg string) []map[string]any {
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

// Env is a server over the test log with its tokens and log.
type Env struct {
	Handler http.Handler
	Tokens  *tokens.Service
	Logs    *SyncBuffer
	Admin   string
	Viewer  string
}

// EnvOption changes how NewEnv builds the app.
type EnvOption func(*httpapi.Deps, *ports.InteractionLog)

// WithLog serves from another interaction log (a failing one).
func WithLog(l ports.InteractionLog) EnvOption {
	return func(_ *httpapi.Deps, log *ports.InteractionLog) { *log = l }
}

// WithReady sets the readiness check.
func WithReady(f func(context.Context) error) EnvOption {
	return func(d *httpapi.Deps, _ *ports.InteractionLog) { d.Ready = f }
}

// WithoutTokens serves without a token service.
func WithoutTokens() EnvOption {
	return func(d *httpapi.Deps, _ *ports.InteractionLog) { d.Tokens = nil }
}

// NewEnv builds the HTTP app over the test log and makes huma's errors
// the spec's for the duration of the test.
func NewEnv(t *testing.T, opts ...EnvOption) *Env {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	clk := clock.NewFixed(Now)
	store := memstore.New()
	if _, err := store.Append(context.Background(), analytics.Each(SampleLog())); err != nil {
		t.Fatal(err)
	}
	tok, err := tokens.New([]byte(Secret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	logs := &SyncBuffer{}
	deps := httpapi.Deps{Tokens: tok, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	var log ports.InteractionLog = store
	for _, o := range opts {
		o(&deps, &log)
	}
	deps.Reporter = reporter.New(SampleCats(), log, log, clk)
	if u, ok := log.(ports.UsageCounter); ok && deps.Usage == nil {
		deps.Usage = u
	}
	_, h := httpapi.New(deps)
	e := &Env{Handler: h, Tokens: tok, Logs: logs}
	e.Admin = e.Issue(t, "alice", "admin")
	e.Viewer = e.Issue(t, "bob", "viewer")
	return e
}

// Issue returns an access token of subject with role.
func (e *Env) Issue(t *testing.T, subject, role string) string {
	t.Helper()
	tok, _, err := e.Tokens.Issue(subject, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Response is what a request got.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Get requests target (path and raw query) with an Authorization header
// when auth is not empty.
func (e *Env) Get(t *testing.T, target, auth string) Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	res := rec.Result()
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// Bearer is the Authorization header of token.
func Bearer(token string) string { return "Bearer " + token }

// AssertJSON checks that got is JSON equal to want (a value to marshal, or
// raw JSON as a string).
func AssertJSON(t *testing.T, got []byte, want any) {
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

// Keys returns the sorted top-level keys of a JSON object.
func Keys(t *testing.T, body []byte) []string {
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

// FaultyLog is an interaction log whose counts fail or panic, for the
// paths no real store takes on demand.
type FaultyLog struct {
	Err   error
	Panic bool
}

// Append fails.
func (f FaultyLog) Append(context.Context, iter.Seq2[analytics.Interaction, error]) (int, error) {
	return 0, f.Err
}

// Answer fails or panics.
func (f FaultyLog) Answer(context.Context, analytics.Query, analytics.Parts) (analytics.Counts, error) {
	if f.Panic {
		panic("store exploded")
	}
	return analytics.Counts{}, f.Err
}
