package analyticsapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/ports"
)

// usageStore holds four interactions of PrivateCat with usage and
// feedback, two of them unanswered.
func usageStore(t *testing.T) *memstore.Store {
	t.Helper()
	at := func(d, h int) time.Time { return time.Date(2024, 3, d, h, 0, 0, 0, time.UTC) }
	one := func(id string, tm time.Time, model, topic, answer string, u analytics.Usage, f analytics.Feedback) analytics.Interaction {
		return analytics.Interaction{Time: tm, Cat: PrivateCat, EventKind: analytics.EventKindAPI, Question: "q-" + id, Answer: answer,
			Topic: topic, Model: model, Persona: "p", ConversationID: "c-" + id, InteractionID: id, Usage: u, Feedback: f}
	}
	def := catconfig.DefaultDefaultAnswer
	s := memstore.New()
	if _, err := s.Append(t.Context(), analytics.Each([]analytics.Interaction{
		one("a", at(1, 9), "m1", "billing", "yes", analytics.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 0.25, LatencyMS: analytics.MS(100)},
			analytics.Feedback{Rating: "up"}),
		one("b", at(1, 10), "m1", "billing", def, analytics.Usage{InputTokens: 50, OutputTokens: 5, CostUSD: 0.5, LatencyMS: analytics.MS(300)},
			analytics.Feedback{Rating: "down", Reason: "wrong", Comment: "not what I asked"}),
		one("c", at(2, 9), "m2", "shipping", "sure", analytics.Usage{InputTokens: 7}, analytics.Feedback{Rating: "down"}),
		one("d", at(3, 9), "m2", "shipping", def, analytics.Usage{}, analytics.Feedback{}),
	})); err != nil {
		t.Fatal(err)
	}
	return s
}

func usageEnv(t *testing.T, s *memstore.Store) *Env {
	return NewEnv(t, func(d *httpapi.Deps, log *ports.InteractionLog) {
		*log, d.Browser = s, s
	})
}

func decode[T any](t *testing.T, r Response) T {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	return v
}

// TestUsageRoute checks /usage's totals, percentiles and groups.
func TestUsageRoute(t *testing.T) {
	e := usageEnv(t, usageStore(t))
	got := decode[map[string]any](t, e.Get(t, "/api/v1/analytics/usage?catname="+PrivateCat+"&group_by=model", Bearer(e.Admin)))
	b300 := analytics.BucketMS(analytics.LatencyBucket(300))
	want := map[string]any{
		"total_interactions": 4.0, "input_tokens": 157.0, "output_tokens": 15.0, "cost_usd": 0.75,
		"latency_ms": map[string]any{"p50": analytics.BucketMS(analytics.LatencyBucket(100)), "p90": b300, "p99": b300, "max": b300},
		"groups": []any{
			map[string]any{"key": "m1", "total_interactions": 2.0, "input_tokens": 150.0, "output_tokens": 15.0, "cost_usd": 0.75,
				"latency_ms": map[string]any{"p50": analytics.BucketMS(analytics.LatencyBucket(100)), "p90": b300, "p99": b300, "max": b300}},
			map[string]any{"key": "m2", "total_interactions": 2.0, "input_tokens": 7.0, "output_tokens": 0.0, "cost_usd": 0.0,
				"latency_ms": map[string]any{"p50": nil, "p90": nil, "p99": nil, "max": nil}},
		},
	}
	if g, w := jsonText(t, got), jsonText(t, want); g != w {
		t.Fatalf("usage\n got %s\nwant %s", g, w)
	}
	days := decode[map[string]any](t, e.Get(t, "/api/v1/analytics/usage?catname="+PrivateCat+"&group_by=day&limit=2&model=m2", Bearer(e.Admin)))
	if g := jsonText(t, days["groups"]); g != `[{"cost_usd":0,"input_tokens":7,"key":"2024-03-02","latency_ms":{"max":null,"p50":null,"p90":null,"p99":null},"output_tokens":0,"total_interactions":1},{"cost_usd":0,"input_tokens":0,"key":"2024-03-03","latency_ms":{"max":null,"p50":null,"p90":null,"p99":null},"output_tokens":0,"total_interactions":1}]` {
		t.Fatalf("days: %s", g)
	}
	if r := e.Get(t, "/api/v1/analytics/usage?catname="+PrivateCat+"&group_by=week", Bearer(e.Admin)); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("group_by=week: status %d", r.Status)
	}
	if r := e.Get(t, "/api/v1/analytics/usage?catname="+PrivateCat, ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", r.Status)
	}
}

// TestFeedbackRoute checks /feedback, and that SetFeedback is counted at
// once.
func TestFeedbackRoute(t *testing.T) {
	s := usageStore(t)
	e := usageEnv(t, s)
	path := "/api/v1/analytics/feedback?catname=" + PrivateCat + "&group_by=topic"
	got := decode[map[string]any](t, e.Get(t, path, Bearer(e.Admin)))
	if g := jsonText(t, got); g != `{"down":2,"groups":[{"down":1,"key":"billing","satisfaction":0.5,"up":1},{"down":1,"key":"shipping","satisfaction":0,"up":0}],"satisfaction":0.3333333333333333,"up":1}` {
		t.Fatalf("feedback: %s", g)
	}
	if err := s.SetFeedback(t.Context(), PrivateCat, "c", analytics.Feedback{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFeedback(t.Context(), PrivateCat, "d", analytics.Feedback{Rating: "up"}); err != nil {
		t.Fatal(err)
	}
	got = decode[map[string]any](t, e.Get(t, path, Bearer(e.Admin)))
	if g := jsonText(t, got); g != `{"down":1,"groups":[{"down":1,"key":"billing","satisfaction":0.5,"up":1},{"down":0,"key":"shipping","satisfaction":1,"up":1}],"satisfaction":0.6666666666666666,"up":2}` {
		t.Fatalf("feedback after changes: %s", g)
	}
	none := decode[map[string]any](t, e.Get(t, "/api/v1/analytics/feedback?catname="+PrivateCat+"&startDate=2030-01-01", Bearer(e.Admin)))
	if g := jsonText(t, none); g != `{"down":0,"groups":[],"satisfaction":null,"up":0}` {
		t.Fatalf("no ratings: %s", g)
	}
}

// TestReviewRoute pages the two queues and exports one.
func TestReviewRoute(t *testing.T) {
	e := usageEnv(t, usageStore(t))
	base := "/api/v1/analytics/review?catname=" + PrivateCat
	type page struct {
		Entries []struct {
			Question, Answer, Rating, Reason, Comment, Model, Topic string
			ConversationID                                          string `json:"conversation_id"`
		} `json:"entries"`
		NextCursor string `json:"next_cursor"`
	}
	first := decode[page](t, e.Get(t, base+"&kind=down&limit=1", Bearer(e.Admin)))
	if len(first.Entries) != 1 || first.Entries[0].Question != "q-c" || first.NextCursor == "" {
		t.Fatalf("first page: %+v", first)
	}
	second := decode[page](t, e.Get(t, base+"&kind=down&limit=1&cursor="+first.NextCursor, Bearer(e.Admin)))
	if len(second.Entries) != 1 || second.NextCursor != "" {
		t.Fatalf("second page: %+v", second)
	}
	if en := second.Entries[0]; en.Question != "q-b" || en.Reason != "wrong" || en.Comment != "not what I asked" || en.ConversationID != "c-b" || en.Rating != "down" || en.Model != "m1" {
		t.Fatalf("entry: %+v", en)
	}
	un := decode[page](t, e.Get(t, base+"&kind=unanswered", Bearer(e.Admin)))
	if len(un.Entries) != 2 || un.Entries[0].Question != "q-d" || un.Entries[1].Question != "q-b" {
		t.Fatalf("unanswered: %+v", un)
	}
	r := e.Get(t, base+"&kind=down&format=jsonl", Bearer(e.Admin))
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("export: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var ids []string
	for line := range jsonl.Decode(bufio.NewReader(bytes.NewReader(r.Body))) {
		if line.Err != nil {
			t.Fatal(line.Err)
		}
		ids = append(ids, line.Interaction.InteractionID+":"+line.Interaction.Feedback.Rating)
	}
	if g := jsonText(t, ids); g != `["c:down","b:down"]` {
		t.Fatalf("export: %s", g)
	}
	if r := e.Get(t, base+"&kind=down", Bearer(e.Viewer)); r.Status != http.StatusForbidden {
		t.Fatalf("viewer: status %d", r.Status)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
