package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestServeAnswersWhileStarting holds a real serve (in this process, on
// SQLite and PostgreSQL) just before the column index's first read:
// meanwhile the listener is open, /healthz answers 200, /readyz 503 and
// the other routes 503 with Retry-After; once the build goes on, /readyz
// answers 200 and /all_warehouse counts the rows the database held.
func TestServeAnswersWhileStarting(t *testing.T) {
	t.Parallel()
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			db := b.DSN(t)
			cfg := configDir(t)
			lines := strings.Repeat(`{"time":"2025-01-02T03:04:05Z","cat":"shop","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`+"\n", 3)
			if out := catsrv(t, strings.NewReader(lines), nil, "import", "--config", cfg, "--db", db, "-"); out.code != 0 {
				t.Fatalf("import exit %d: %s", out.code, out.stderr)
			}

			held, release := make(chan struct{}), make(chan struct{})
			hold := func(ctx context.Context) {
				close(held)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			logs := &syncBuffer{}
			go func() {
				done <- serveHeld(ctx, []string{"--config", cfg, "--db", db, "--addr", "127.0.0.1:0"},
					environ{"CATSRV_JWT_SECRET=" + testSecret}, logs, hold)
			}()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v\n%s", err, logs.String())
				}
			})
			select {
			case <-held:
			case err := <-done:
				t.Fatalf("serve ended before the build: %v\n%s", err, logs.String())
			}
			base, err := waitLogURL(logs, "catsrv starting", nil) // logged before the build
			if err != nil {
				t.Fatal(err)
			}

			if code, body, _ := send(t, nil, http.MethodGet, base+"/healthz", ""); code != http.StatusOK || !strings.Contains(body, `"status":"ok"`) {
				t.Errorf("healthz while starting: %d %s", code, body)
			}
			code, body, _ := send(t, nil, http.MethodGet, base+"/readyz", "")
			var ready struct{ Status, Message string }
			if err := json.Unmarshal([]byte(body), &ready); err != nil || code != http.StatusServiceUnavailable ||
				ready.Status != "unavailable" || !strings.Contains(ready.Message, "starting") {
				t.Errorf("readyz while starting: %d %s", code, body)
			}
			for _, c := range []struct{ method, path, code string }{
				{http.MethodGet, "/api/v1/analytics/all_warehouse?catname=shop", "ANALYTICS-ERR-0-WAREHOUSE"},
				{http.MethodPost, "/api/v1/cat/chat", "UNAVAILABLE"},
			} {
				code, body, header := send(t, nil, c.method, base+c.path, "")
				var e struct {
					Error  string
					Status int
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusServiceUnavailable ||
					e.Error != c.code || e.Status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
					t.Errorf("%s %s while starting: %d %v %s", c.method, c.path, code, header, body)
				}
			}

			close(release)
			waitReady(t, base+"/readyz")
			code, body, _ = send(t, nil, http.MethodGet, base+"/api/v1/analytics/all_warehouse?catname=shop", "")
			if code != http.StatusOK || !strings.Contains(body, `"total_interactions":3`) {
				t.Errorf("all_warehouse once ready: %d %s", code, body)
			}
		})
	}
}
