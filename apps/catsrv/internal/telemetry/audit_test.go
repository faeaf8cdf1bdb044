package telemetry_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/chat/agent"
)

// TestAuditLogCounts: each event recorded is counted once, logins by
// provider and outcome, every event by kind, with names no provider or
// kind has counted as "other"; the events still reach the log.
func TestAuditLogCounts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	store := memstore.NewAuth()
	log, err := telemetry.AuditLog(reg, store)
	if err != nil {
		t.Fatal(err)
	}
	events := []auth.AuditEvent{
		{Kind: auth.AuditLoginStart, Provider: auth.ProviderB},
		{Kind: auth.AuditLoginSuccess, Provider: auth.ProviderB, UserID: "u1"},
		{Kind: auth.AuditLoginSuccess, Provider: auth.ProviderB, UserID: "u2"},
		{Kind: auth.AuditLoginFailure, Provider: auth.ProviderA, Reason: "state"},
		{Kind: auth.AuditProviderDisabled, Provider: "provider_<script>"},
		{Kind: auth.AuditRefreshReuse, UserID: "u1"},
		{Kind: privacy.AuditErasure, UserID: "root"},
		{Kind: agent.AuditToolCall, UserID: "u1", Provider: "files"},
		{Kind: agent.AuditToolCall, UserID: "u2", Provider: "files"},
		{Kind: "something_new"},
	}
	for _, e := range events {
		if err := log.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := store.Events(t.Context(), auth.AuditFilter{})
	if err != nil || len(stored) != len(events) {
		t.Fatalf("the log holds %d events (%v), want %d", len(stored), err, len(events))
	}
	err = testutil.GatherAndCompare(reg, stringsReader(`
# HELP catsrv_auth_logins_total Login outcomes, by identity provider and outcome (success, failure, provider_disabled).
# TYPE catsrv_auth_logins_total counter
catsrv_auth_logins_total{outcome="failure",provider="provider_a"} 1
catsrv_auth_logins_total{outcome="failure",provider="provider_b"} 0
catsrv_auth_logins_total{outcome="failure",provider="provider_c"} 0
catsrv_auth_logins_total{outcome="provider_disabled",provider="other"} 1
catsrv_auth_logins_total{outcome="provider_disabled",provider="provider_a"} 0
catsrv_auth_logins_total{outcome="provider_disabled",provider="provider_b"} 0
catsrv_auth_logins_total{outcome="provider_disabled",provider="provider_c"} 0
catsrv_auth_logins_total{outcome="success",provider="provider_a"} 0
catsrv_auth_logins_total{outcome="success",provider="provider_b"} 2
catsrv_auth_logins_total{outcome="success",provider="provider_c"} 0
# HELP catsrv_auth_events_total Authentication events recorded in the audit log, by event.
# TYPE catsrv_auth_events_total counter
catsrv_auth_events_total{event="erasure"} 1
catsrv_auth_events_total{event="login_failure"} 1
catsrv_auth_events_total{event="login_start"} 1
catsrv_auth_events_total{event="login_success"} 2
catsrv_auth_events_total{event="logout"} 0
catsrv_auth_events_total{event="other"} 1
catsrv_auth_events_total{event="provider_disabled"} 1
catsrv_auth_events_total{event="rate_limited"} 0
catsrv_auth_events_total{event="refresh"} 0
catsrv_auth_events_total{event="refresh_failure"} 0
catsrv_auth_events_total{event="refresh_reuse"} 1
catsrv_auth_events_total{event="tool_call"} 2
`), "catsrv_auth_logins_total", "catsrv_auth_events_total")
	if err != nil {
		t.Fatal(err)
	}
}
