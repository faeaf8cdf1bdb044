package main

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth"
)

func TestAuthRateLimitEnvironment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  environ
		want authapi.RateLimit
		err  string
	}{
		{environ{}, authapi.RateLimit{PerSecond: 1, Burst: 20}, ""},
		{environ{"CATSRV_AUTH_RATE_LIMIT=0.5", "CATSRV_AUTH_RATE_BURST=5"}, authapi.RateLimit{PerSecond: 0.5, Burst: 5}, ""},
		{environ{"CATSRV_AUTH_RATE_LIMIT=off"}, authapi.RateLimit{Disabled: true, Burst: 20}, ""},
		{environ{"CATSRV_AUTH_RATE_LIMIT=0"}, authapi.RateLimit{Disabled: true, Burst: 20}, ""},
		{environ{"CATSRV_AUTH_RATE_LIMIT=-1"}, authapi.RateLimit{}, "CATSRV_AUTH_RATE_LIMIT"},
		{environ{"CATSRV_AUTH_RATE_LIMIT=NaN"}, authapi.RateLimit{}, "CATSRV_AUTH_RATE_LIMIT"},
		{environ{"CATSRV_AUTH_RATE_LIMIT=fast"}, authapi.RateLimit{}, "CATSRV_AUTH_RATE_LIMIT"},
		{environ{"CATSRV_AUTH_RATE_BURST=0"}, authapi.RateLimit{}, "CATSRV_AUTH_RATE_BURST"},
		{environ{"CATSRV_AUTH_RATE_BURST=2.5"}, authapi.RateLimit{}, "CATSRV_AUTH_RATE_BURST"},
	}
	for _, c := range cases {
		var got authapi.RateLimit
		cfg, err := config.Load(c.env, nil)
		if err == nil {
			got = authRateLimit(cfg)
		}
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%v: %+v, %v; want %+v", c.env, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.err)
		}
	}
}

func TestAuditRetentionEnvironment(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	cases := []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", 90 * day, false},
		{"30d", 30 * day, false},
		{"2160h", 90 * day, false},
		{"36h30m", 36*time.Hour + 30*time.Minute, false},
		{"off", 0, false},
		{"0", 0, false},
		{"10m", 0, true},
		{"0d", 0, true},
		{"-5d", 0, true},
		{"1.5d", 0, true},
		{"forever", 0, true},
	}
	for _, c := range cases {
		var got time.Duration
		cfg, err := config.Load(environ{"CATSRV_AUDIT_RETENTION=" + c.value}, nil)
		if err == nil {
			got = cfg.AuditRetention
		}
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("CATSRV_AUDIT_RETENTION=%q: %s, %v; want %s (error %v)", c.value, got, err, c.want, c.bad)
		}
	}
}

// TestServeLimitsAndPrunes drives the real binary: audit events older than
// CATSRV_AUDIT_RETENTION are pruned when serve starts, newer ones kept, and
// a client over CATSRV_AUTH_RATE_BURST gets 429 with Retry-After, audited
// once.
func TestServeLimitsAndPrunes(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	store, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	records, err := authsql.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, at := range []time.Time{now.AddDate(0, 0, -400), now.AddDate(0, 0, -31), now.AddDate(0, 0, -29), now.Add(-time.Hour)} {
		if err := records.Record(t.Context(), auth.AuditEvent{Time: at, Kind: auth.AuditLogout, UserID: "u_seed"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	srv := startServe(t, configDir(t), dsn, "CATSRV_AUDIT_RETENTION=30d", "CATSRV_AUTH_RATE_BURST=3", "CATSRV_AUTH_RATE_LIMIT=0.01")
	logs := srv.logs

	// The pass at start runs in the background: wait for its log line.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"audit log pruned","deleted":2`) {
		if time.Now().After(deadline) {
			t.Fatalf("no pruning at start:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	var statuses []int
	retryAfter := ""
	for range 6 {
		code, _, header := send(t, nil, http.MethodPost, srv.base+"/api/v1/auth/provider_a", "")
		statuses = append(statuses, code)
		if code == http.StatusTooManyRequests {
			retryAfter = header.Get("Retry-After")
		}
	}
	// The default CAT does not enable provider_a: 403 until the burst is spent.
	want := []int{403, 403, 403, 429, 429, 429}
	if !slices.Equal(statuses, want) || retryAfter != "100" {
		t.Fatalf("statuses %v (Retry-After %q), want %v with Retry-After 100", statuses, retryAfter, want)
	}

	out := catsrv(t, nil, nil, "audit", "--db", dsn, "--json")
	if out.code != 0 {
		t.Fatalf("audit: %d %s", out.code, out.stderr)
	}
	counts := map[string]int{}
	for _, kind := range []string{"logout", "provider_disabled", "rate_limited"} {
		counts[kind] = strings.Count(out.stdout, `"event":"`+kind+`"`)
	}
	if counts["logout"] != 2 || counts["provider_disabled"] != 3 || counts["rate_limited"] != 1 {
		t.Fatalf("audit after start and flood: %v, want the 2 recent seeded events, 3 refusals of provider_a, 1 rate_limited:\n%s", counts, out.stdout)
	}
}
