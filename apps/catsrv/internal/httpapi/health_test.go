package httpapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

func TestHealthz(t *testing.T) {
	e := NewEnv(t)
	res := e.Get(t, "/healthz", "")
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	AssertJSON(t, res.Body, `{"status":"ok"}`)
}

func TestReadyz(t *testing.T) {
	cause := errors.New("dial tcp 10.1.2.3:5432: connect: connection refused")
	cases := []struct {
		name   string
		ready  func(context.Context) error
		status int
		want   string
	}{
		{"no check", nil, 200, `{"status":"ready"}`},
		{"check passes", func(context.Context) error { return nil }, 200, `{"status":"ready"}`},
		{"check fails", func(context.Context) error { return cause }, 503, `{"status":"unavailable","message":"a dependency is not available"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEnv(t, WithReady(c.ready))
			res := e.Get(t, "/readyz", "")
			if res.Status != c.status {
				t.Fatalf("status %d, want %d: %s", res.Status, c.status, res.Body)
			}
			AssertJSON(t, res.Body, c.want)
			if c.status != 200 && !strings.Contains(e.Logs.String(), cause.Error()) {
				t.Errorf("cause not logged: %s", e.Logs.String())
			}
		})
	}
}

func TestRequestLog(t *testing.T) {
	cases := []struct {
		name, target string
		auth         bool
		route        string
		status       float64
	}{
		{"success", AnalyticsPrefix + "/all?catname=private&topic=SECRET-TOPIC&startDate=2024-01-01", true, AnalyticsPrefix + "/all", 200},
		{"unauthorized", AnalyticsPrefix + "/questions?catname=private&limit=5", false, AnalyticsPrefix + "/questions", 401},
		{"validation error", AnalyticsPrefix + "/answers?limit=SECRET-LIMIT", true, AnalyticsPrefix + "/answers", 422},
		{"health", "/healthz", false, "/healthz", 200},
		{"no route", "/api/v1/analytics/SECRET-PATH?x=1", true, "unmatched", 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEnv(t)
			auth := ""
			if c.auth {
				auth = Bearer(e.Admin)
			}
			e.Get(t, c.target, auth)
			lines := e.Logs.Lines(t, "request")
			if len(lines) != 1 {
				t.Fatalf("%d request lines, want 1:\n%s", len(lines), e.Logs.String())
			}
			l := lines[0]
			if l["method"] != "GET" || l["route"] != c.route || l["status"] != c.status {
				t.Errorf("line %v, want GET %s %v", l, c.route, c.status)
			}
			if _, ok := l["duration_ms"].(float64); !ok {
				t.Errorf("no duration_ms: %v", l)
			}
			logs := e.Logs.String()
			for _, secret := range []string{e.Admin, "Bearer", "SECRET", "catname", "?"} {
				if strings.Contains(logs, secret) {
					t.Errorf("log contains %q:\n%s", secret, logs)
				}
			}
		})
	}
}

// TestNoSniffOnEveryResponse: every answer, JSON error bodies that echo
// the caller's input among them, tells browsers not to guess its type.
func TestNoSniffOnEveryResponse(t *testing.T) {
	e := NewEnv(t)
	for _, target := range []string{
		"/healthz", "/readyz", "/openapi.json",
		"/api/v1/analytics/all?catname=%3Cscript%3Ealert(1)%3C/script%3E", // 500 naming the CAT
		"/api/v1/analytics/all",                     // 422: catname missing
		"/api/v1/cat/conversations?catname=%3Cb%3E", // 401
		"/no/such/route",
	} {
		res := e.Get(t, target, "")
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: status %d, X-Content-Type-Options %q, want nosniff", target, res.Status, got)
		}
	}
}
