package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestImportVisibleAtOnce: while another process (catsrv import) commits
// a long import into the database of a running server, /all (raw SQL)
// and /all_warehouse (the column index, which reads the import in many
// chunks' worth of rows) each show the total from before the import or
// the total after it, never a part of it, and each answer's topic counts
// add up to its total; at the end both show the total after. On SQLite
// and on PostgreSQL.
func TestImportVisibleAtOnce(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var db string
			if backend == "sqlite" {
				db = "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
			} else {
				db = sqltest.PostgresDSN(t)
			}
			importVisibleAtOnce(t, db)
		})
	}
}

// visibilityLines is the size of the import the routes are polled
// during: about twenty of the index's former chunks of 4,096 rows, five
// under -short (the pollers and the import share the test machine's CPU).
func visibilityLines() int {
	if testing.Short() {
		return 20_000
	}
	return 80_000
}

func importVisibleAtOnce(t *testing.T, db string) {
	cfg := configDir(t)
	first := catsrv(t, nil, nil, "demo", "--interactions", "2000", "--cats", "demo", "--seed", "3")
	if imp := catsrv(t, strings.NewReader(first.stdout), nil, "import", "--config", cfg, "--db", db, "-"); imp.code != 0 {
		t.Fatalf("first import: exit %d: %s", imp.code, imp.stderr)
	}
	token := issueToken(t, cfg, "ops", "admin")
	// The second import's lines are written to a file first, so that the
	// import is all the database work there is while the routes are polled.
	second := catsrv(t, nil, nil, "demo", "--interactions", fmt.Sprint(visibilityLines()), "--cats", "demo", "--seed", "4")
	file := filepath.Join(t.TempDir(), "second.jsonl")
	if err := os.WriteFile(file, []byte(second.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	before := apiCount(t, first.stdout, "demo")
	after := before + apiCount(t, second.stdout, "demo")

	srv := startServe(t, cfg, db)
	base := srv.base

	routes := []string{"/api/v1/analytics/all", "/api/v1/analytics/all_warehouse"}
	total := func(route string) (int64, error) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, base+route+"?catname=demo", nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var body struct {
			Total  *int64 `json:"total_interactions"`
			Topics []struct {
				Count int64 `json:"count"`
			} `json:"topic_counts"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return 0, fmt.Errorf("%s: status %d: %w", route, resp.StatusCode, err)
		}
		if resp.StatusCode != http.StatusOK || body.Total == nil {
			return 0, fmt.Errorf("%s: status %d, no total", route, resp.StatusCode)
		}
		// Every demo interaction has a topic: the topic list of one
		// answer counts the rows of its total, from the same state.
		var topics int64
		for _, tc := range body.Topics {
			topics += tc.Count
		}
		if topics != *body.Total {
			return 0, fmt.Errorf("%s: total_interactions %d but the topic counts add up to %d", route, *body.Total, topics)
		}
		return *body.Total, nil
	}
	for _, route := range routes {
		if n, err := total(route); err != nil || n != before {
			t.Fatalf("%s before the import: %d (%v), want %d", route, n, err, before)
		}
	}

	// Each route is polled by its own client, as fast as it answers,
	// from before the import starts until both have shown its total for
	// half a second.
	seen := make([]map[int64]int, len(routes))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for k, route := range routes {
		seen[k] = map[int64]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := total(route)
				if err != nil {
					t.Error(err)
					return
				}
				seen[k][n]++
			}
		}()
	}
	imp := exec.Command(binary, "import", "--config", cfg, "--db", db, file)
	imp.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := imp.CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("imported %d interactions", visibilityLines())) {
		close(stop)
		wg.Wait()
		t.Fatalf("second import: %v: %s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n0, err0 := total(routes[0])
		n1, err1 := total(routes[1])
		if err0 == nil && err1 == nil && n0 == after && n1 == after {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("30 s after the import: %s %d (%v), %s %d (%v), want %d on both", routes[0], n0, err0, routes[1], n1, err1, after)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the total after, a while longer
	close(stop)
	wg.Wait()

	for k, route := range routes {
		values := slices.Sorted(func(yield func(int64) bool) {
			for n := range seen[k] {
				if !yield(n) {
					return
				}
			}
		})
		polls := 0
		for _, n := range values {
			polls += seen[k][n]
			if n != before && n != after {
				t.Errorf("%s answered %d (%d times): neither %d before the import nor %d after", route, n, seen[k][n], before, after)
			}
		}
		t.Logf("%s: %d polls around the import (%s), total: polls %v", route, polls, strings.TrimSpace(string(out)), seen[k])
	}
	if t.Failed() {
		for _, line := range strings.Split(srv.logs.String(), "\n") {
			if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
				t.Logf("server: %s", line)
			}
		}
	}
}
