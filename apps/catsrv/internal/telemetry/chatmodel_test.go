package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/core/chat"
)

// modelServer is an OpenAI-compatible chat-completions service whose
// behaviour the request's model names: "ok" answers (streamed when asked),
// "fail" answers 500, "hang" never answers.
func modelServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("model request: %v", err)
		}
		switch {
		case body.Model == "fail":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"down","type":"x","code":"y"}}`)
		case body.Model == "hang":
			<-r.Context().Done()
		case body.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"ok\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"ok",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestChatModelCounts: every call of the real OpenAI adapter through the
// decorator is counted and timed once, by call and by how it ended.
func TestChatModelCounts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	model, err := telemetry.ChatModel(reg, openai.New(openai.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	base := modelServer(t)
	req := func(name string) chat.ModelRequest {
		return chat.ModelRequest{Cat: "demo", BaseURL: base, Model: name, Timeout: 10 * time.Second,
			Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}
	}
	complete := func(ctx context.Context, r chat.ModelRequest) {
		_, _ = model.Complete(ctx, r)
	}
	stream := func(ctx context.Context, r chat.ModelRequest) {
		_, _ = model.Stream(ctx, r, func(string) error { return nil })
	}
	complete(t.Context(), req("ok"))
	complete(t.Context(), req("ok"))
	complete(t.Context(), req("fail"))
	stream(t.Context(), req("ok"))
	stream(t.Context(), req("fail"))
	hang := req("hang")
	hang.Timeout = 20 * time.Millisecond // the model's own time limit, not a timing assertion
	complete(t.Context(), hang)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	stream(canceled, req("ok"))
	complete(t.Context(), chat.ModelRequest{Cat: "demo", Model: "ok"}) // no endpoint: not configured

	want := map[[2]string]float64{
		{"complete", telemetry.OutcomeOK}:              2,
		{"complete", telemetry.OutcomeUpstreamFailed}:  1,
		{"complete", telemetry.OutcomeUpstreamTimeout}: 1,
		{"complete", telemetry.OutcomeError}:           1,
		{"stream", telemetry.OutcomeOK}:                1,
		{"stream", telemetry.OutcomeUpstreamFailed}:    1,
		{"stream", telemetry.OutcomeCanceled}:          1,
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := [2]string{labels["call"], labels["outcome"]}
			switch f.GetName() {
			case "catsrv_chat_model_requests_total":
				seen++
				if got := m.GetCounter().GetValue(); got != want[key] {
					t.Errorf("requests %v = %v, want %v", key, got, want[key])
				}
			case "catsrv_chat_model_duration_seconds":
				if got := float64(m.GetHistogram().GetSampleCount()); got != want[key] {
					t.Errorf("duration %v counted %v calls, want %v", key, got, want[key])
				}
			}
		}
	}
	if seen != 10 { // every call and outcome, at 0 when it never happened
		t.Errorf("%d request series, want 10", seen)
	}
	if n := testutil.CollectAndCount(reg, "catsrv_chat_model_duration_seconds"); n != len(want) {
		t.Errorf("%d duration series, want %d", n, len(want))
	}
}
