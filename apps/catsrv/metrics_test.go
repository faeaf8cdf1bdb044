package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeModel is an OpenAI-compatible chat-completions service that answers
// every request at once, counting them.
func fakeModel(t *testing.T, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m-1",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Purr."},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// scrape is one parse of /metrics: each series' value (a counter's or
// gauge's value, a histogram's count) by its name and labels.
type scrape map[string]float64

// seriesKey names a series: the metric's name, then its labels sorted by
// name, as name{a="x",b="y"}.
func seriesKey(name string, m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return name + "{" + strings.Join(labels, ",") + "}"
}

// scrapeMetrics fetches and parses the Prometheus text at url.
func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url) // #nosec G107 -- loopback test server
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	out := scrape{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[seriesKey(name, m)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[seriesKey(name, m)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[seriesKey(name+"_count", m)] = float64(m.GetHistogram().GetSampleCount())
			default:
				out[seriesKey(name, m)] = m.GetUntyped().GetValue()
			}
		}
	}
	return out
}

// moved returns the series of the prefix whose value changed from before
// to after, by how much.
func moved(before, after scrape, prefix string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if strings.HasPrefix(k, prefix) && v != before[k] {
			out[k] = v - before[k]
		}
	}
	return out
}

// TestMetricsScrape drives the real binary with the metrics listener on:
// requests that answer 200, 401, 404 and 503, a chat through the agent
// model, a provider login that succeeds and one that fails; /metrics (on
// its own address, not the API's) then shows each counter moved by
// exactly what was done, with route templates for labels.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	var modelCalls atomic.Int64
	llm := fakeModel(t, &modelCalls)
	idp := fakeGoogle(t, "gclient", "gsecret")
	cfg := t.TempDir()
	for name, body := range map[string]string{
		"demo.yaml": "cat:\n  chat_mode: agent\n  agent:\n    base_url: " + llm.URL + "/v1\n    model: m-1\n" +
			"security:\n  providers:\n    provider_a: {enabled: true}\n    provider_b: {enabled: true}\n",
		"shop.yaml": "security:\n  analytics:\n    public: true\n",
	} {
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServeOnFreePort(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"),
		"CATSRV_METRICS_ADDR=127.0.0.1:0", "CATSRV_COOKIE_INSECURE=true",
		"CATSRV_PROVIDER_B_CLIENT_ID=gclient", "CATSRV_PROVIDER_B_CLIENT_SECRET=gsecret", "CATSRV_PROVIDER_B_BASE_URL="+idp.URL)
	base, metricsURL := srv.base, srv.logURL(t, "metrics serving")
	user := issueToken(t, cfg, "alice", "user")
	if code, _, _ := send(t, nil, http.MethodGet, base+"/metrics", ""); code != http.StatusNotFound {
		t.Fatalf("the API's address serves /metrics: %d", code)
	}

	before := scrapeMetrics(t, metricsURL)
	expect := func(method, target, body string, want int, header ...string) {
		t.Helper()
		if code, got, _ := send(t, nil, method, base+target, body, header...); code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, target, code, got, want)
		}
	}
	expect(http.MethodGet, "/healthz", "", http.StatusOK)
	expect(http.MethodGet, "/healthz", "", http.StatusOK)
	expect(http.MethodGet, "/api/v1/analytics/all?catname=demo", "", http.StatusUnauthorized)
	expect(http.MethodGet, "/api/v1/analytics/all?catname=shop", "", http.StatusOK)
	expect(http.MethodGet, "/api/v1/analytics/all?catname=shop&startDate=not-a-date", "", http.StatusInternalServerError) // the spec's 500 for a caller's mistake
	expect(http.MethodGet, "/no/such/page-42", "", http.StatusNotFound)
	expect(http.MethodGet, "/api/v1/cat/conversations/conv-404?catname=demo", "", http.StatusNotFound, "Authorization", "Bearer "+user)
	expect(http.MethodPost, "/api/v1/cat/chat?catname=demo", `{"message":"hello"}`, http.StatusOK, "Authorization", "Bearer "+user)
	expect(http.MethodPost, "/api/v1/auth/provider_a?catname=demo", "", http.StatusServiceUnavailable) // no credentials
	// A batch ingested twice: stored, then already stored.
	admin := issueToken(t, cfg, "root", "admin")
	batch := `{"time":"2025-06-01T10:00:00Z","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p","interaction_id":"e-1"}` + "\n" +
		`{"time":"2025-06-01T10:01:00Z","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p","interaction_id":"e-2"}` + "\n"
	for range 2 {
		expect(http.MethodPost, "/api/v1/analytics/interactions?catname=shop", batch, http.StatusOK,
			"Authorization", "Bearer "+admin, "Content-Type", "application/x-ndjson")
	}
	// A provider_b login against the local provider, then a callback with
	// a forged state.
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, body, _ := send(t, browser, http.MethodPost, base+"/api/v1/auth/provider_b?catname=demo", "")
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &start); code != http.StatusOK || err != nil {
		t.Fatalf("login start: %d %s", code, body)
	}
	code, _, h := send(t, browser, http.MethodGet, start.AuthorizationURL, "")
	if code != http.StatusFound {
		t.Fatalf("identity provider: %d", code)
	}
	if code, body, _ = send(t, browser, http.MethodGet, h.Get("Location"), ""); code != http.StatusSeeOther {
		t.Fatalf("callback: %d %s", code, body)
	}
	forged, _, _ := send(t, browser, http.MethodGet, base+"/api/v1/auth/provider_b/callback?state=forged&code=x", "")
	if forged < 400 {
		t.Fatalf("a forged state answered %d", forged)
	}
	after := scrapeMetrics(t, metricsURL)

	requests := map[string]float64{
		`catsrv_http_requests_total{method="GET",route="/healthz",status="200"}`:                                             2,
		`catsrv_http_requests_total{method="GET",route="/api/v1/analytics/all",status="401"}`:                                1,
		`catsrv_http_requests_total{method="GET",route="/api/v1/analytics/all",status="200"}`:                                1,
		`catsrv_http_requests_total{method="GET",route="/api/v1/analytics/all",status="500_client"}`:                         1,
		`catsrv_http_requests_total{method="GET",route="unmatched",status="404"}`:                                            1,
		`catsrv_http_requests_total{method="GET",route="/api/v1/cat/conversations/{id}",status="404"}`:                       1,
		`catsrv_http_requests_total{method="POST",route="/api/v1/cat/chat",status="200"}`:                                    1,
		`catsrv_http_requests_total{method="POST",route="/api/v1/auth/provider_a",status="503"}`:                             1,
		`catsrv_http_requests_total{method="POST",route="/api/v1/auth/provider_b",status="200"}`:                             1,
		`catsrv_http_requests_total{method="GET",route="/api/v1/auth/provider_b/callback",status="303"}`:                     1,
		fmt.Sprintf(`catsrv_http_requests_total{method="GET",route="/api/v1/auth/provider_b/callback",status="%d"}`, forged): 1,
		`catsrv_http_requests_total{method="POST",route="/api/v1/analytics/interactions",status="200"}`:                      2,
	}
	durations := map[string]float64{}
	for k, v := range requests {
		durations[strings.Replace(k, "catsrv_http_requests_total", "catsrv_http_request_duration_seconds_count", 1)] = v
	}
	for _, c := range []struct {
		prefix string
		want   map[string]float64
	}{
		{"catsrv_http_requests_total", requests},
		{"catsrv_http_request_duration_seconds_count", durations},
		{"catsrv_chat_model_requests_total", map[string]float64{`catsrv_chat_model_requests_total{call="complete",outcome="ok"}`: 1}},
		{"catsrv_chat_model_duration_seconds_count", map[string]float64{`catsrv_chat_model_duration_seconds_count{call="complete",outcome="ok"}`: 1}},
		{"catsrv_auth_logins_total", map[string]float64{
			`catsrv_auth_logins_total{outcome="success",provider="provider_b"}`:           1,
			`catsrv_auth_logins_total{outcome="failure",provider="provider_b"}`:           1,
			`catsrv_auth_logins_total{outcome="provider_disabled",provider="provider_a"}`: 1,
		}},
		{"catsrv_auth_events_total", map[string]float64{
			`catsrv_auth_events_total{event="login_start"}`:       1,
			`catsrv_auth_events_total{event="login_success"}`:     1,
			`catsrv_auth_events_total{event="login_failure"}`:     1,
			`catsrv_auth_events_total{event="provider_disabled"}`: 1,
		}},
		{"catsrv_index_rows", map[string]float64{`catsrv_index_rows{}`: 3}}, // the chat's interaction and the batch's two
		{"catsrv_ingest_lines_total", map[string]float64{
			`catsrv_ingest_lines_total{outcome="stored"}`:         2,
			`catsrv_ingest_lines_total{outcome="already_stored"}`: 2,
		}},
	} {
		got := moved(before, after, c.prefix)
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s moved by %v, want %v", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := c.want[k]; !ok {
				t.Errorf("%s moved by %v, want 0", k, v)
			}
		}
	}
	if n := modelCalls.Load(); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
	for k := range after {
		if strings.HasPrefix(k, "catsrv_http_") && (strings.Contains(k, "page-42") || strings.Contains(k, "conv-404") || strings.Contains(k, "catname")) {
			t.Errorf("a request label holds the raw URL: %s", k)
		}
	}
	for _, k := range []string{
		`catsrv_index_lag_rows{}`, `catsrv_index_lag_seconds{}`,
		`go_sql_max_open_connections{db_name="sqlite"}`, `go_sql_open_connections{db_name="sqlite"}`,
		`go_goroutines{}`, `process_start_time_seconds{}`,
	} {
		if _, ok := after[k]; !ok {
			t.Errorf("/metrics has no %s", k)
		}
	}
	if after[`catsrv_index_lag_rows{}`] != 0 || after[`catsrv_index_lag_seconds{}`] != 0 {
		t.Errorf("index lag after the chat's own refresh: %v rows, %v s; want 0, 0", after[`catsrv_index_lag_rows{}`], after[`catsrv_index_lag_seconds{}`])
	}
	if after[`go_sql_max_open_connections{db_name="sqlite"}`] < 1 {
		t.Errorf("go_sql_max_open_connections = %v", after[`go_sql_max_open_connections{db_name="sqlite"}`])
	}
}

// TestServeGCTarget: serve collects at GOGC 50 unless GOGC is set, as
// /metrics reports the runtime's target.
func TestServeGCTarget(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	for _, c := range []struct {
		env  []string
		want float64
	}{{nil, serveGCPercent}, {[]string{"GOGC=80"}, 80}} {
		s := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"), append(c.env, "CATSRV_METRICS_ADDR=127.0.0.1:0")...)
		if got, ok := scrapeMetrics(t, s.logURL(t, "metrics serving"))["go_gc_gogc_percent{}"]; !ok || got != c.want {
			t.Errorf("with %v: go_gc_gogc_percent %v (reported: %v), want %v", c.env, got, ok, c.want)
		}
	}
}
