package httpapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestHealthz(t *testing.T) {
	e := newEnv(t)
	res := e.get(t, "/healthz", "")
	if res.status != 200 {
		t.Fatalf("status %d", res.status)
	}
	assertJSON(t, res.body, `{"status":"ok"}`)
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
			e := newEnv(t, withReady(c.ready))
			res := e.get(t, "/readyz", "")
			if res.status != c.status {
				t.Fatalf("status %d, want %d: %s", res.status, c.status, res.body)
			}
			assertJSON(t, res.body, c.want)
			if c.status != 200 && !strings.Contains(e.logs.String(), cause.Error()) {
				t.Errorf("cause not logged: %s", e.logs.String())
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
		{"success", prefix + "/all?catname=private&topic=SECRET-TOPIC&startDate=2024-01-01", true, prefix + "/all", 200},
		{"unauthorized", prefix + "/questions?catname=private&limit=5", false, prefix + "/questions", 401},
		{"validation error", prefix + "/answers?limit=SECRET-LIMIT", true, prefix + "/answers", 422},
		{"health", "/healthz", false, "/healthz", 200},
		{"no route", "/api/v1/analytics/SECRET-PATH?x=1", true, "unmatched", 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			auth := ""
			if c.auth {
				auth = bearer(e.admin)
			}
			e.get(t, c.target, auth)
			lines := e.logs.lines(t, "request")
			if len(lines) != 1 {
				t.Fatalf("%d request lines, want 1:\n%s", len(lines), e.logs.String())
			}
			l := lines[0]
			if l["method"] != "GET" || l["route"] != c.route || l["status"] != c.status {
				t.Errorf("line %v, want GET %s %v", l, c.route, c.status)
			}
			if _, ok := l["duration_ms"].(float64); !ok {
				t.Errorf("no duration_ms: %v", l)
			}
			logs := e.logs.String()
			for _, secret := range []string{e.admin, "Bearer", "SECRET", "catname", "?"} {
				if strings.Contains(logs, secret) {
					t.Errorf("log contains %q:\n%s", secret, logs)
				}
			}
		})
	}
}
