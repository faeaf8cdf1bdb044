package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestServeOnPostgresWithoutStandardStrings drives the real binary on a
// database whose default, and whose DSN, turn standard_conforming_strings
// off, with the payloads that once escaped bun's string literals there:
// an audited User-Agent, a conversation id, a rename and analytics
// filters. None may run SQL, read or change another user's data.
func TestServeOnPostgresWithoutStandardStrings(t *testing.T) {
	t.Parallel()
	dbDSN := sqltest.PostgresDatabaseDSN(t, map[string]string{"standard_conforming_strings": "off"})
	dsn := dbDSN + "&options=-c%20standard_conforming_strings%3Doff"
	probe, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	var scs string
	if err := probe.QueryRowContext(t.Context(), "SHOW standard_conforming_strings").Scan(&scs); err != nil || scs != "off" {
		t.Fatalf("test database: standard_conforming_strings = %q (%v), want off", scs, err)
	}
	markerTables := func() int {
		t.Helper()
		var n int
		if err := probe.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename LIKE '%marker%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "demo.yaml"), []byte("cat:\n  chat_mode: legacy\nsecurity:\n  providers:\n    provider_a: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, cfg, dsn)
	base := srv.base
	alice, bob, admin := issueToken(t, cfg, "alice", "user"), issueToken(t, cfg, "bob", "user"), issueToken(t, cfg, "root", "admin")
	do := func(method, target, bearer, body string, header ...string) (int, string) {
		t.Helper()
		if bearer != "" {
			header = append(header, "Authorization", "Bearer "+bearer)
		}
		code, body, _ := send(t, nil, method, target, body, header...)
		return code, body
	}

	// 1. The audit insert of an anonymous start.
	ua := `x\', '') ; CREATE TABLE unauth_marker(a int); --`
	if code, body := do(http.MethodPost, base+"/api/v1/auth/provider_a?catname=demo", "", "", "User-Agent", ua); code >= 500 && code != http.StatusServiceUnavailable {
		t.Fatalf("anonymous start: %d %s", code, body)
	}
	audit := catsrv(t, nil, nil, "audit", "--db", dsn, "--json")
	if audit.code != 0 || !strings.Contains(audit.stdout, `x\\', '') ; CREATE TABLE unauth_marker(a int); --`) {
		t.Errorf("audit lacks the User-Agent verbatim: %d %s %s", audit.code, audit.stdout, audit.stderr)
	}

	// 2. Another user's conversation through a hostile id.
	chat := func(bearer, message string) string {
		t.Helper()
		code, body := do(http.MethodPost, base+"/api/v1/cat/chat?catname=demo", bearer, `{"message":`+quote(message)+`}`)
		var out struct {
			ConversationID string `json:"conversation_id"`
		}
		if err := json.Unmarshal([]byte(body), &out); code != http.StatusOK || err != nil || out.ConversationID == "" {
			t.Fatalf("chat: %d %s", code, body)
		}
		return out.ConversationID
	}
	aliceConv := chat(alice, "alice's secret plan")
	bobConv := chat(bob, "bob says hello")
	conv := base + "/api/v1/cat/conversations/"
	for _, id := range []string{`\' OR 1=1 --`, `\' OR 1=1) --`, `x\' OR id <> \'`} {
		code, body := do(http.MethodGet, conv+url.PathEscape(id)+"?catname=demo", bob, "")
		if code != http.StatusNotFound || strings.Contains(body, "secret plan") {
			t.Errorf("GET conversation %q as bob: %d %s", id, code, body)
		}
	}

	// 3. A rename that would end its literal and drop the WHERE clause.
	for _, name := range []string{`\'; UPDATE chat_conversations SET name = $$pwned$$; --`, `\', name = $$pwned$$ --`, `\' --`} {
		code, body := do(http.MethodPut, conv+bobConv+"/rename?catname=demo", bob, `{"name":`+quote(name)+`}`)
		if code != http.StatusOK || !strings.Contains(body, quote(name)) {
			t.Errorf("rename to %q: %d %s", name, code, body)
		}
		code, body = do(http.MethodGet, conv+aliceConv+"?catname=demo", alice, "")
		if code != http.StatusOK || strings.Contains(body, "pwned") || !strings.Contains(body, `"name":"alice's secret plan"`) {
			t.Errorf("alice's conversation after bob's rename %q: %d %s", name, code, body)
		}
	}
	code, body := do(http.MethodGet, base+"/api/v1/cat/conversations/search?catname=demo&q="+url.QueryEscape(`\' OR 1=1 --`), bob, "")
	if code != http.StatusOK || strings.Contains(body, aliceConv) {
		t.Errorf("search as bob: %d %s", code, body)
	}

	// 4. Analytics filters: hostile values match nothing and break nothing.
	for _, route := range []string{"all", "all_legacy", "all_warehouse", "metrics/topic_counts"} {
		q := url.Values{"catname": {"demo"}}
		for _, p := range []string{"topic", "model", "persona", "questionid", "answerid"} {
			q.Add(p, `x\' OR 1=1 --`)
			q.Add(p, `\'; CREATE TABLE analytics_marker(a int); --`)
		}
		code, body := do(http.MethodGet, base+"/api/v1/analytics/"+route+"?"+q.Encode(), admin, "")
		if code != http.StatusOK || strings.Contains(body, `"total_interactions":1`) || strings.Contains(body, `"total_interactions":2`) {
			t.Errorf("%s with hostile filters: %d %s", route, code, body)
		}
	}
	if n := markerTables(); n != 0 {
		t.Errorf("%d tables created by injected SQL", n)
	}
	if strings.Contains(srv.logs.String(), `"msg":"request failed"`) {
		t.Errorf("requests failed:\n%s", srv.logs.String())
	}
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
