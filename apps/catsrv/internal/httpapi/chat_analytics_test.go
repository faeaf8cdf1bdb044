package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestChatFeedsAnalyticsAtOnce chats, then reads /all and /all_warehouse:
// each answered message is counted with its topic, model and persona (from
// the context, else the user's memory), and the raw log and the rollups
// agree.
func TestChatFeedsAnalyticsAtOnce(t *testing.T) {
	e := newChatEnv(t)
	admin, alice, carol := e.token(t, "root", "admin"), e.token(t, "alice", "user"), e.token(t, "carol", "user")
	turns := []struct {
		auth string
		body map[string]any
		// want is the interaction analytics should count.
		want analytics.Interaction
	}{
		{alice, chatMsg("hi"), analytics.Interaction{Topic: "general", Model: "greeting", Persona: "default"}},
		{alice, chatMsg("my invoice is wrong", func(b map[string]any) { b["context"] = map[string]any{"persona": "formal"} }),
			analytics.Interaction{Topic: "billing", Model: "default", Persona: "formal"}},
		{carol, chatMsg("reset my password"), analytics.Interaction{Topic: "general", Model: "qa", Persona: "pirate"}},
		{carol, chatMsg("tell me a story", func(b map[string]any) { b["context"] = map[string]any{"topic": "stories"} }),
			analytics.Interaction{Topic: "stories", Model: "default", Persona: "pirate"}},
	}
	var want []analytics.Interaction
	for _, tt := range turns {
		r := e.call(t, http.MethodPost, chatPath+"/chat", tt.auth, tt.body)
		var c chatapi.ChatResponse
		r.decode(t, &c)
		if r.status != http.StatusOK || c.Model != tt.want.Model {
			t.Fatalf("chat %v: %d %s", tt.body, r.status, r.body)
		}
		in := tt.want
		in.Time, in.Cat, in.EventKind, in.Question, in.Answer = now, legacyCat, analytics.EventKindAPI, tt.body["message"].(string), c.Message
		want = append(want, in.Normalize())
	}
	ref := analytics.Aggregate(want, analytics.Query{Cat: legacyCat})
	wantBody, err := json.Marshal(analyticsapi.ResultBody(ref))
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []string{"/all", "/all_warehouse"} {
		t.Run(route, func(t *testing.T) {
			r := e.call(t, http.MethodGet, "/api/v1/analytics"+route+"?catname="+legacyCat+"&startDate=2024-03-01&endDate=2024-04-01", admin, nil)
			var got analyticsapi.AnalyticsResult
			r.decode(t, &got)
			if r.status != http.StatusOK || got.TotalInteractions != int64(len(turns)) || got.TotalInteractions != ref.TotalInteractions {
				t.Fatalf("%d %s", r.status, r.body)
			}
			gotBody, err := json.Marshal(got)
			if err != nil || string(gotBody) != string(wantBody) {
				t.Errorf("got  %s\nwant %s", gotBody, wantBody)
			}
		})
	}
}
