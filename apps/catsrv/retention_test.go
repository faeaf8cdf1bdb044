package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
)

func TestRetentionIntervalEnvironment(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]time.Duration{"": time.Hour, "10m": 10 * time.Minute, "off": 0, "0": 0} {
		cfg, err := config.Load(environ{"CATSRV_RETENTION_INTERVAL=" + value}, nil)
		if err != nil || cfg.RetentionInterval != want {
			t.Errorf("CATSRV_RETENTION_INTERVAL=%q: %v, %v; want %s", value, cfg, err, want)
		}
	}
	for _, bad := range []string{"30s", "-1h", "hourly"} {
		if _, err := config.Load(environ{"CATSRV_RETENTION_INTERVAL=" + bad}, nil); err == nil || !strings.Contains(err.Error(), "CATSRV_RETENTION_INTERVAL") {
			t.Errorf("CATSRV_RETENTION_INTERVAL=%q: %v, want an error naming it", bad, err)
		}
	}
}

// TestServeRetention drives the real binary: the retention pass at start
// deletes shop's interactions older than its analytics.retention_days and
// its conversations idle longer than chat.retention_days, and nothing of
// demo, which keeps everything; the analytics answer over what remains.
func TestServeRetention(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	store, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	chats, err := chatsql.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	event := func(cat string, at time.Time) analytics.Interaction {
		return analytics.Interaction{Time: at, Cat: cat, EventKind: analytics.EventKindAPI, Question: "q", Answer: "a",
			Topic: "t", Model: "m", Persona: "p", UserID: "u"}
	}
	var in []analytics.Interaction
	for _, at := range []time.Time{now.AddDate(0, 0, -400), now.AddDate(0, 0, -40), now.AddDate(0, 0, -32)} {
		in = append(in, event("shop", at), event("demo", at))
	}
	in = append(in, event("shop", now.Add(-time.Hour)), event("shop", now.Add(-2*time.Hour)))
	if _, err := store.Append(t.Context(), analytics.Each(in)); err != nil {
		t.Fatal(err)
	}
	for id, at := range map[string]time.Time{"idle": now.AddDate(0, 0, -3), "recent": now.Add(-time.Hour)} {
		turn := chat.Turn{
			Conversation: chat.Conversation{ID: id, Owner: chat.Owner{Cat: "shop", UserID: "u"}, Name: id, CreatedAt: at, UpdatedAt: at},
			New:          true,
			Messages:     []chat.Message{{Role: chat.RoleUser, Content: "hello", Time: at}},
		}
		if err := chats.RecordTurn(t.Context(), turn); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := configDir(t)
	shop := "security:\n  analytics:\n    public: true\nanalytics:\n  retention_days: 30\nchat:\n  retention_days: 1\n"
	if err := os.WriteFile(filepath.Join(cfg, "shop.yaml"), []byte(shop), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := startServe(t, cfg, dsn)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.logs.String(), `"msg":"retention pass","interactions":3,"conversations":1`) {
		if time.Now().After(deadline) {
			t.Fatalf("no retention pass at start:\n%s", srv.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, route := range []string{"/api/v1/analytics/all", "/api/v1/analytics/all_warehouse"} {
		code, body, _ := send(t, nil, http.MethodGet, srv.base+route+"?catname=shop", "")
		var got struct {
			Total int64 `json:"total_interactions"`
		}
		if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil || got.Total != 2 {
			t.Errorf("%s after retention: %d %s, want the 2 recent interactions", route, code, body)
		}
	}
	check, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	demo, err := check.Answer(t.Context(), analytics.Query{Cat: "demo"}, analytics.PartTotal)
	if err != nil || demo.Total != 3 {
		t.Errorf("demo keeps %d interactions (%v), want all 3", demo.Total, err)
	}
	var ids []string
	if err := check.DB().NewSelect().TableExpr("chat_conversations").Column("id").Scan(t.Context(), &ids); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "recent" {
		t.Errorf("conversations after retention %v, want [recent]", ids)
	}
}
