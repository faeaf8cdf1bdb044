package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The multi-instance test of issue 12 (item 5): three `catsrv serve`
// processes on one fresh PostgreSQL database, on loopback ports. What one
// instance writes (a chat, a runtime configuration change, a login's
// rotation or its logout) is in force on the others; a killed instance
// costs the others nothing and loses no answered chat.

// instanceBound is the issue's bound on how long another instance may
// take to show a change.
const instanceBound = time.Second

// cluster is the three instances and what the test shares between them.
type cluster struct {
	dsn   string
	cfg   string
	token string // an admin access token (catsrv token), valid on all
	nodes []*served
}

func TestThreeInstancesOnOnePostgres(t *testing.T) {
	t.Parallel()
	dsn, _, _ := postgresDatabase(t)
	idp := fakeGoogle(t, "gclient", "gsecret")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "demo.yaml"),
		[]byte("cat:\n  chat_mode: legacy\nsecurity:\n  providers:\n    provider_b: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cluster{dsn: dsn, cfg: cfg, token: issueToken(t, cfg, "ops", "admin")}
	for range 3 {
		c.nodes = append(c.nodes, startServeOnFreePort(t, cfg, dsn, "CATSRV_COOKIE_INSECURE=true", "CATSRV_AUTH_RATE_LIMIT=off",
			"CATSRV_PROVIDER_B_CLIENT_ID=gclient", "CATSRV_PROVIDER_B_CLIENT_SECRET=gsecret", "CATSRV_PROVIDER_B_BASE_URL="+idp.URL))
	}
	defer func() {
		if t.Failed() {
			for i, n := range c.nodes {
				t.Logf("instance %d log (last 4 KiB):\n%s", i, logTail(n.logs.String(), 4096))
			}
		}
	}()

	t.Run("ChatShowsInTheAnalyticsOfAll", c.chatShowsEverywhere)
	t.Run("ConfigSyncInForceOnAll", c.configSyncEverywhere)
	t.Run("RefreshTokenRaceHasOneWinner", c.refreshRace)
	t.Run("LogoutRefusedOnAll", c.logoutEverywhere)
	t.Run("KilledInstanceLosesNoAnsweredChat", c.killOneDuringChats)
}

func logTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// call makes one request to a node with the admin token and returns the
// status and the body.
func (c *cluster) call(ctx context.Context, node *served, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, node.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// mustJSON makes a request that must answer 200 and decodes its body.
func (c *cluster) mustJSON(t *testing.T, node *served, method, path, body string, out any) {
	t.Helper()
	status, raw, err := c.call(t.Context(), node, method, path, body)
	if err != nil || status != http.StatusOK {
		t.Fatalf("%s %s%s: %v %d %s", method, node.base, path, err, status, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
}

// totals returns a node's interaction total from the raw log (/all) and
// from the column index (/all_warehouse).
func (c *cluster) totals(t *testing.T, node *served) (raw, index int64) {
	t.Helper()
	var all, wh struct {
		Total int64 `json:"total_interactions"`
	}
	c.mustJSON(t, node, http.MethodGet, "/api/v1/analytics/all?catname=demo", "", &all)
	c.mustJSON(t, node, http.MethodGet, "/api/v1/analytics/all_warehouse?catname=demo", "", &wh)
	return all.Total, wh.Total
}

// within polls check on every node until it holds on all of them, and
// fails the test if that takes longer than instanceBound from start. It
// returns how long it took.
func (c *cluster) within(t *testing.T, start time.Time, what string, check func(node *served) (bool, string)) time.Duration {
	t.Helper()
	pending := map[int]bool{0: true, 1: true, 2: true}
	for {
		for i := range pending {
			if ok, _ := check(c.nodes[i]); ok {
				delete(pending, i)
			}
		}
		took := time.Since(start)
		if len(pending) == 0 {
			return took
		}
		if took > instanceBound {
			for i := range pending {
				_, state := check(c.nodes[i])
				t.Errorf("%s: instance %d still shows %s after %v", what, i, state, took)
			}
			t.FailNow()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// chatShowsEverywhere: a chat on each instance in turn is counted by the
// raw log and the column index of all three within the bound.
func (c *cluster) chatShowsEverywhere(t *testing.T) {
	want, _ := c.totals(t, c.nodes[0])
	var slowest time.Duration
	for i, node := range c.nodes {
		var out struct {
			ConversationID string `json:"conversation_id"`
		}
		c.mustJSON(t, node, http.MethodPost, "/api/v1/cat/legacy_chat?catname=demo", fmt.Sprintf(`{"message":"hello from instance %d"}`, i), &out)
		answered := time.Now()
		want++
		took := c.within(t, answered, fmt.Sprintf("chat on instance %d", i), func(n *served) (bool, string) {
			raw, index := c.totals(t, n)
			return raw == want && index == want, fmt.Sprintf("/all %d, /all_warehouse %d, want %d", raw, index, want)
		})
		slowest = max(slowest, took)
	}
	t.Logf("a chat showed on all three instances after at most %v", slowest)
}

// configOf reads a node's effective configuration of CAT demo.
func (c *cluster) configOf(t *testing.T, node *served) (mode, model string, temperature float64) {
	t.Helper()
	var out struct {
		Cat struct {
			ChatMode string `json:"chat_mode"`
			Agent    struct {
				Model       string  `json:"model"`
				Temperature float64 `json:"temperature"`
			} `json:"agent"`
		} `json:"cat"`
	}
	c.mustJSON(t, node, http.MethodGet, "/api/v1/cat/config?catname=demo", "", &out)
	return out.Cat.ChatMode, out.Cat.Agent.Model, out.Cat.Agent.Temperature
}

// configSyncEverywhere: a sync on one instance is in force on all three
// within the bound; syncs of different keys on two instances at once both
// stick everywhere; syncs on each instance in turn end on the last one
// everywhere.
func (c *cluster) configSyncEverywhere(t *testing.T) {
	var out json.RawMessage
	c.mustJSON(t, c.nodes[0], http.MethodPost, "/api/v1/cat/config/sync?catname=demo", `{"chat_mode":"custom"}`, &out)
	took := c.within(t, time.Now(), "sync on instance 0", func(n *served) (bool, string) {
		mode, _, _ := c.configOf(t, n)
		return mode == "custom", "chat_mode " + mode
	})
	t.Logf("a config sync was in force on all three instances after %v", took)

	// Different keys of one CAT on two instances at once: neither lost.
	var wg sync.WaitGroup
	for _, s := range []struct {
		node int
		body string
	}{{1, `{"agent":{"model":"model-from-1"}}`}, {2, `{"agent":{"temperature":0.25}}`}} {
		wg.Go(func() {
			status, raw, err := c.call(t.Context(), c.nodes[s.node], http.MethodPost, "/api/v1/cat/config/sync?catname=demo", s.body)
			if err != nil || status != http.StatusOK {
				t.Errorf("sync on instance %d: %v %d %s", s.node, err, status, raw)
			}
		})
	}
	wg.Wait()
	synced := time.Now()
	c.within(t, synced, "two concurrent syncs", func(n *served) (bool, string) {
		mode, model, temp := c.configOf(t, n)
		return mode == "custom" && model == "model-from-1" && temp == 0.25, fmt.Sprintf("mode %s model %q temperature %v", mode, model, temp)
	})

	// One after the other on each instance: every instance ends on the last.
	for i, mode := range []string{"agent", "legacy", "custom"} {
		c.mustJSON(t, c.nodes[i], http.MethodPost, "/api/v1/cat/config/sync?catname=demo", `{"chat_mode":"`+mode+`"}`, &out)
	}
	c.within(t, time.Now(), "syncs in turn", func(n *served) (bool, string) {
		mode, model, temp := c.configOf(t, n)
		return mode == "custom" && model == "model-from-1" && temp == 0.25, fmt.Sprintf("mode %s model %q temperature %v", mode, model, temp)
	})
	// Back to legacy for the chats that follow.
	c.mustJSON(t, c.nodes[0], http.MethodPost, "/api/v1/cat/config/sync?catname=demo", `{"chat_mode":"legacy"}`, &out)
	c.within(t, time.Now(), "sync back to legacy", func(n *served) (bool, string) {
		mode, _, _ := c.configOf(t, n)
		return mode == "legacy", "chat_mode " + mode
	})
}

// loginTokens are one login's tokens.
type loginTokens struct{ access, refresh string }

// login signs in through provider_b on a node and returns the session's
// tokens (from the cookies the callback sets).
func (c *cluster) login(t *testing.T, node *served) loginTokens {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, body, _ := send(t, client, http.MethodPost, node.base+"/api/v1/auth/provider_b?catname=demo", "")
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &start); code != http.StatusOK || err != nil {
		t.Fatalf("login start: %d %s", code, body)
	}
	code, _, h := send(t, client, http.MethodGet, start.AuthorizationURL, "")
	if code != http.StatusFound {
		t.Fatalf("identity provider: %d", code)
	}
	if code, body, _ = send(t, client, http.MethodGet, h.Get("Location"), ""); code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s", code, body)
	}
	var s loginTokens
	u, err := url.Parse(node.base + "/api/v1/auth/refresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range jar.Cookies(u) {
		switch ck.Name {
		case "catsrv_access":
			s.access = ck.Value
		case "catsrv_refresh":
			s.refresh = ck.Value
		}
	}
	if s.access == "" || s.refresh == "" {
		t.Fatalf("the login set no access or refresh cookie: %v", jar.Cookies(u))
	}
	return s
}

// presentRefresh presents a refresh token in the body (no cookies) and returns
// the status, the body and the new refresh token when there is one.
func presentRefresh(ctx context.Context, node *served, token string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, node.base+"/api/v1/auth/refresh", strings.NewReader(`{"refresh_token":"`+token+`"}`))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	var next string
	for _, ck := range resp.Cookies() {
		if ck.Name == "catsrv_refresh" {
			next = ck.Value
		}
	}
	return resp.StatusCode, string(raw), next, err
}

// refreshRace: one login's refresh token presented to two instances at
// once: exactly one rotates it, the other is refused as reuse, and the
// whole login is revoked (the winner's new token is refused too).
func (c *cluster) refreshRace(t *testing.T) {
	s := c.login(t, c.nodes[0])
	type answer struct {
		node         int
		status       int
		body, rotate string
		err          error
	}
	answers := make(chan answer, 2)
	ready := make(chan struct{})
	for _, i := range []int{1, 2} {
		go func() {
			<-ready
			status, body, next, err := presentRefresh(t.Context(), c.nodes[i], s.refresh)
			answers <- answer{i, status, body, next, err}
		}()
	}
	close(ready)
	var ok, refused []answer
	for range 2 {
		a := <-answers
		switch {
		case a.err != nil:
			t.Fatalf("refresh on instance %d: %v", a.node, a.err)
		case a.status == http.StatusOK:
			ok = append(ok, a)
		case a.status == http.StatusUnauthorized:
			refused = append(refused, a)
		default:
			t.Fatalf("refresh on instance %d: %d %s", a.node, a.status, a.body)
		}
	}
	if len(ok) != 1 || len(refused) != 1 {
		t.Fatalf("%d refreshes succeeded and %d were refused, want exactly one each: %+v %+v", len(ok), len(refused), ok, refused)
	}
	if !strings.Contains(refused[0].body, "reuse detected") {
		t.Errorf("the refused refresh does not name the reuse: %s", refused[0].body)
	}
	if ok[0].rotate == "" {
		t.Fatalf("the successful refresh set no new refresh token")
	}
	for i, node := range c.nodes {
		if status, body, _, err := presentRefresh(t.Context(), node, ok[0].rotate); err != nil || status != http.StatusUnauthorized {
			t.Errorf("the winner's new token after the reuse, on instance %d: %v %d %s; want 401", i, err, status, body)
		}
	}
	audit := catsrv(t, nil, nil, "audit", "--db", c.dsn)
	if !strings.Contains(audit.stdout, "refresh_reuse") {
		t.Errorf("the audit log has no refresh_reuse:\n%s", logTail(audit.stdout, 2048))
	}
}

// readMemory asks a node for the caller's memory with an access token.
func readMemory(ctx context.Context, node *served, access string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, node.base+"/api/v1/auth/memory", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// logoutEverywhere: a logout on one instance is refused at once on all:
// its access token and its refresh token.
func (c *cluster) logoutEverywhere(t *testing.T) {
	s := c.login(t, c.nodes[1])
	for i, node := range c.nodes {
		if status, err := readMemory(t.Context(), node, s.access); err != nil || status != http.StatusOK {
			t.Fatalf("memory on instance %d before the logout: %v %d", i, err, status)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.nodes[1].base+"/api/v1/auth/logout", strings.NewReader(`{"refresh_token":"`+s.refresh+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	for i, node := range c.nodes {
		if status, err := readMemory(t.Context(), node, s.access); err != nil || status != http.StatusUnauthorized {
			t.Errorf("the access token after the logout, on instance %d: %v %d; want 401", i, err, status)
		}
		if status, body, _, err := presentRefresh(t.Context(), node, s.refresh); err != nil || status != http.StatusUnauthorized {
			t.Errorf("the refresh token after the logout, on instance %d: %v %d %s; want 401", i, err, status, body)
		}
	}
}

// chatSeconds is how long the clients chat while one instance is killed.
const chatSeconds = 20

// shortChatSeconds is chatSeconds under -short.
const shortChatSeconds = 2

// killOneDuringChats: clients chat on all three instances for
// chatSeconds (shortChatSeconds under -short); a quarter of the way in, instance 2 is killed with
// SIGKILL. The other two answer every chat sent to them (200), and every
// chat answered 200, on any instance, is stored exactly once.
func (c *cluster) killOneDuringChats(t *testing.T) {
	const clients = 6
	var (
		// done ends the load between requests, not during one: a request
		// the client gave up on could still be stored after the counts
		// below are read.
		done        atomic.Bool
		killed      atomic.Bool
		mu          sync.Mutex
		answered    []string // conversation ids of chats answered 200
		afterKill   [3]int   // 200s per instance after the kill
		failedAfter [3]int   // other answers of the survivors after the kill
	)
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() {
			for n := 0; !done.Load(); n++ {
				i := (cl + n) % 3
				if i == 2 && killed.Load() {
					i = n % 2
				}
				wasKilled := killed.Load()
				status, raw, err := c.call(t.Context(), c.nodes[i], http.MethodPost, "/api/v1/cat/legacy_chat?catname=demo",
					fmt.Sprintf(`{"message":"How do I reset my password? (client %d, message %d)"}`, cl, n))
				if err != nil || status != http.StatusOK {
					if i == 2 {
						continue // the killed instance: no answer, or none it owes
					}
					mu.Lock()
					if wasKilled {
						failedAfter[i]++
					}
					mu.Unlock()
					t.Errorf("chat on instance %d: %v %d %s", i, err, status, raw)
					continue
				}
				var out struct {
					ConversationID string `json:"conversation_id"`
				}
				if err := json.Unmarshal(raw, &out); err != nil || out.ConversationID == "" {
					t.Errorf("chat answer %s: %v", raw, err)
					continue
				}
				mu.Lock()
				answered = append(answered, out.ConversationID)
				if wasKilled {
					afterKill[i]++
				}
				mu.Unlock()
			}
		})
	}
	chatFor := chatSeconds * time.Second
	if testing.Short() {
		chatFor = shortChatSeconds * time.Second
	}
	time.Sleep(chatFor / 4)
	if err := c.nodes[2].proc.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killed.Store(true)
	time.Sleep(chatFor * 3 / 4)
	done.Store(true)
	wg.Wait()
	t.Logf("%d chats answered; after the kill: %d on instance 0, %d on instance 1", len(answered), afterKill[0], afterKill[1])
	if afterKill[0] == 0 || afterKill[1] == 0 || failedAfter[0]+failedAfter[1] > 0 {
		t.Fatalf("after the kill the survivors answered %v and failed %v", afterKill[:2], failedAfter[:2])
	}

	db, err := sql.Open("pgx", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := storedChats(t, db)
	for _, id := range answered {
		if n := stored[id]; n != [3]int{1, 2, 1} {
			t.Errorf("chat %s answered 200 is stored as %d conversations, %d messages, %d interactions; want 1, 2, 1", id, n[0], n[1], n[2])
		}
	}
	for id, n := range stored {
		if n[0] != 1 || n[2] > 1 {
			t.Errorf("conversation %s stored %d times with %d interactions", id, n[0], n[2])
		}
	}

	// The survivors' analytics count every stored chat interaction.
	var inDB int64
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM interactions WHERE cat = 'demo'`).Scan(&inDB); err != nil {
		t.Fatal(err)
	}
	for i, node := range c.nodes[:2] {
		if raw, _ := c.totals(t, node); raw != inDB {
			t.Errorf("instance %d /all counts %d interactions, the database holds %d", i, raw, inDB)
		}
	}
}

// storedChats returns, per stored conversation id, how many conversations
// have that id, how many messages and how many interactions it has.
func storedChats(t *testing.T, db *sql.DB) map[string][3]int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT c.id,
		(SELECT count(*) FROM chat_conversations c2 WHERE c2.id = c.id),
		(SELECT count(*) FROM chat_messages m WHERE m.conversation_seq = c.seq),
		(SELECT count(*) FROM interactions i WHERE i.conversation_id = c.id)
		FROM chat_conversations c`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[string][3]int{}
	for rows.Next() {
		var (
			id string
			n  [3]int
		)
		if err := rows.Scan(&id, &n[0], &n[1], &n[2]); err != nil {
			t.Fatal(err)
		}
		stored[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return stored
}

// TestTwoInstancesOnOneSQLiteFollowConfig: on SQLite too,
// the poll alone brings a config sync on one process to another on the
// same file within the bound.
func TestTwoInstancesOnOneSQLiteFollowConfig(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	c := &cluster{cfg: cfg, token: issueToken(t, cfg, "ops", "admin")}
	c.nodes = []*served{startServe(t, cfg, db), startServe(t, cfg, db)}
	var out json.RawMessage
	c.mustJSON(t, c.nodes[1], http.MethodPost, "/api/v1/cat/config/sync?catname=demo", `{"chat_mode":"custom"}`, &out)
	synced := time.Now()
	for mode, _, _ := c.configOf(t, c.nodes[0]); mode != "custom"; mode, _, _ = c.configOf(t, c.nodes[0]) {
		if took := time.Since(synced); took > instanceBound {
			t.Fatalf("the other process still serves chat_mode %s after %v", mode, took)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
