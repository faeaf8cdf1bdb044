package chatapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestChatFeedsAnalyticsAtOnce chats, then reads /all and /all_warehouse:
// each answered message is counted with its topic, model and persona (from
// the context, else the user's memory), and the raw log and the rollups
// agree.
func TestChatFeedsAnalyticsAtOnce(t *testing.T) {
	e := NewChatEnv(t)
	admin, alice, carol := e.Token(t, "root", "admin"), e.Token(t, "alice", "user"), e.Token(t, "carol", "user")
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
		r := e.Call(t, http.MethodPost, ChatPath+"/chat", tt.auth, tt.body)
		var c chatapi.ChatResponse
		r.Decode(t, &c)
		if r.Status != http.StatusOK || c.Model != tt.want.Model {
			t.Fatalf("chat %v: %d %s", tt.body, r.Status, r.Body)
		}
		in := tt.want
		in.Time, in.Cat, in.EventKind, in.Question, in.Answer = Now, LegacyCat, analytics.EventKindAPI, tt.body["message"].(string), c.Message
		want = append(want, in.Normalize())
	}
	ref := analytics.Aggregate(want, analytics.Query{Cat: LegacyCat})
	wantBody, err := json.Marshal(analyticsapi.ResultBody(ref, analytics.Window{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []string{"/all", "/all_warehouse"} {
		t.Run(route, func(t *testing.T) {
			r := e.Call(t, http.MethodGet, "/api/v1/analytics"+route+"?catname="+LegacyCat+"&startDate=2024-03-01&endDate=2024-04-01", admin, nil)
			var got analyticsapi.AnalyticsResult
			r.Decode(t, &got)
			if r.Status != http.StatusOK || got.TotalInteractions != int64(len(turns)) || got.TotalInteractions != ref.TotalInteractions {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			gotBody, err := json.Marshal(got)
			if err != nil || string(gotBody) != string(wantBody) {
				t.Errorf("got  %s\nwant %s", gotBody, wantBody)
			}
		})
	}
}
