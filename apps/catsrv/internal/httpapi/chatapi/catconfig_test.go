package chatapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
)

func TestConfigGetAndSync(t *testing.T) {
	e := NewChatEnv(t)
	admin, alice := e.Token(t, "root", "admin"), e.Token(t, "alice", "user")

	t.Run("get shows the effective configuration and secret presence", func(t *testing.T) {
		for cat, key := range map[string]string{AgentCat: "set", LegacyCat: "unset"} {
			r := e.Call(t, http.MethodGet, ChatPath+"/config?catname="+cat, admin, nil)
			var c chatapi.ConfigResponse
			r.Decode(t, &c)
			if r.Status != http.StatusOK || c.Name != cat || c.Cat.Agent.Model != "m-test" || c.Secrets["agent_api_key"] != key {
				t.Errorf("%s: %d %s", cat, r.Status, r.Body)
			}
		}
	})
	t.Run("sync switches the mode for the next request", func(t *testing.T) {
		before := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, chatMsg("tell me something"))
		var b chatapi.ChatResponse
		before.Decode(t, &b)
		if b.Model != "default" {
			t.Fatalf("before sync: %s", before.Body)
		}
		r := e.Call(t, http.MethodPost, ChatPath+"/config/sync", admin, `{"chat_mode":"agent","agent":{"model":"m-synced","temperature":0.1}}`)
		var c chatapi.ConfigResponse
		r.Decode(t, &c)
		if r.Status != http.StatusOK || c.Cat.ChatMode != "agent" || c.Cat.Agent.Model != "m-synced" || c.Cat.Agent.Temperature != 0.1 || c.Cat.Agent.MaxTokens != 1024 {
			t.Fatalf("sync: %d %s", r.Status, r.Body)
		}
		after := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, chatMsg("tell me something"))
		var a chatapi.ChatResponse
		after.Decode(t, &a)
		if a.Model != "m-synced" || e.Model.Last()["temperature"] != 0.1 {
			t.Errorf("after sync: %s, upstream saw %v", after.Body, e.Model.Last())
		}
	})
	t.Run("a restart keeps the change", func(t *testing.T) {
		e.Restart(t)
		r := e.Call(t, http.MethodGet, ChatPath+"/config", admin, nil)
		var c chatapi.ConfigResponse
		r.Decode(t, &c)
		if c.Cat.ChatMode != "agent" || c.Cat.Agent.Model != "m-synced" {
			t.Errorf("after restart: %s", r.Body)
		}
		chat := e.Call(t, http.MethodPost, ChatPath+"/chat", alice, chatMsg("again"))
		var a chatapi.ChatResponse
		chat.Decode(t, &a)
		if a.Model != "m-synced" {
			t.Errorf("chat after restart: %s", chat.Body)
		}
	})
	t.Run("analytics sees the effective mode", func(t *testing.T) {
		r := e.Call(t, http.MethodGet, "/api/v1/analytics/get_cats", admin, nil)
		var cats analyticsapi.CatsBody
		r.Decode(t, &cats)
		for _, c := range cats.Cats {
			if c.Name == LegacyCat && c.ChatMode != "agent" {
				t.Errorf("get_cats shows %+v", c)
			}
		}
	})
}

func TestConfigErrors(t *testing.T) {
	e := NewChatEnv(t)
	admin, alice := e.Token(t, "root", "admin"), e.Token(t, "alice", "user")
	tests := []struct {
		name, method, path, auth string
		body                     string
		status                   int
		field                    string
	}{
		{"get without token", http.MethodGet, "/config", "", "", 401, ""},
		{"get as user", http.MethodGet, "/config", alice, "", 403, ""},
		{"sync as user", http.MethodPost, "/config/sync", alice, `{"chat_mode":"agent"}`, 403, ""},
		{"unknown CAT", http.MethodGet, "/config?catname=ghost", admin, "", 404, ""},
		{"bad mode", http.MethodPost, "/config/sync", admin, `{"chat_mode":"magic"}`, 422, "cat.chat_mode"},
		{"bad temperature", http.MethodPost, "/config/sync", admin, `{"agent":{"temperature":5}}`, 422, "cat.agent.temperature"},
		{"bad timeout", http.MethodPost, "/config/sync", admin, `{"agent":{"timeout_seconds":0}}`, 422, "cat.agent.timeout_seconds"},
		{"bad stage", http.MethodPost, "/config/sync", admin, `{"legacy":{"models":["qa","oracle"]}}`, 422, "cat.legacy.models"},
		{"bad min score", http.MethodPost, "/config/sync", admin, `{"legacy":{"min_score":2}}`, 422, "cat.legacy.min_score"},
		{"bad rule", http.MethodPost, "/config/sync", admin, `{"custom":{"rules":["keyword => agent"]}}`, 422, "cat.custom.rules[0]"},
		{"bad default route", http.MethodPost, "/config/sync", admin, `{"custom":{"default_route":"moon"}}`, 422, "cat.custom.default_route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			r := e.Call(t, tt.method, ChatPath+tt.path, tt.auth, body)
			b := r.ErrorBody(t)
			if r.Status != tt.status || b.Status != tt.status || !strings.HasPrefix(b.Message, tt.field) {
				t.Errorf("got %d %s, want %d naming %q", r.Status, r.Body, tt.status, tt.field)
			}
		})
	}
	t.Run("keys that cannot change at run time are named", func(t *testing.T) {
		for body, field := range map[string]string{
			`{"agent":{"base_url":"http://evil.example"}}`: "base_url",
			`{"max_message_bytes":1}`:                      "max_message_bytes",
			`{"agent":{"max_tokens":"many"}}`:              "max_tokens",
		} {
			r := e.Call(t, http.MethodPost, ChatPath+"/config/sync", admin, body)
			var v base.ValidationError
			r.Decode(t, &v)
			raw, _ := json.Marshal(v.Detail)
			if r.Status != 422 || !strings.Contains(string(raw), field) {
				t.Errorf("%s: %d %s", body, r.Status, r.Body)
			}
		}
	})
	r := e.Call(t, http.MethodGet, ChatPath+"/config", admin, nil)
	var c chatapi.ConfigResponse
	r.Decode(t, &c)
	if c.Cat.ChatMode != "legacy" || c.Cat.Agent.Temperature != 0.7 {
		t.Errorf("refused changes were applied: %s", r.Body)
	}
}
