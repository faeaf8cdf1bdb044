package telemetry

import (
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/chat/agent"
	"github.com/catsrv/catsrv/ports"
)

// loginOutcomes are the login outcome label's values, by the audit event
// that records them.
var loginOutcomes = map[auth.AuditKind]string{
	auth.AuditLoginSuccess:     "success",
	auth.AuditLoginFailure:     "failure",
	auth.AuditProviderDisabled: "provider_disabled",
}

// auditKinds are the event label's values: every kind the server records
// (the erasures of privacy and the agent's tool calls too); any other
// kind is "other".
var auditKinds = []auth.AuditKind{
	auth.AuditLoginStart, auth.AuditLoginSuccess, auth.AuditLoginFailure, auth.AuditProviderDisabled,
	auth.AuditRefresh, auth.AuditRefreshFailure, auth.AuditRefreshReuse, auth.AuditLogout, auth.AuditRateLimited,
	privacy.AuditErasure, agent.AuditToolCall,
}

// auditLog counts the events recorded through it.
type auditLog struct {
	ports.AuditLog
	logins, events *prometheus.CounterVec
}

// AuditLog decorates next so that every event recorded is counted, in
// reg: logins by provider and outcome (catsrv_auth_logins_total: success,
// failure, provider_disabled) and every event by kind
// (catsrv_auth_events_total). A provider that is none of auth.Providers
// (a login route's path names it) counts as "other", an unknown kind too:
// the labels stay bounded whatever clients send.
func AuditLog(reg prometheus.Registerer, next ports.AuditLog) (ports.AuditLog, error) {
	a := &auditLog{
		AuditLog: next,
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catsrv_auth_logins_total",
			Help: "Login outcomes, by identity provider and outcome (success, failure, provider_disabled).",
		}, []string{"provider", "outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catsrv_auth_events_total",
			Help: "Authentication events recorded in the audit log, by event.",
		}, []string{"event"}),
	}
	if err := register(reg, a.logins, a.events); err != nil {
		return nil, err
	}
	for _, p := range auth.Providers {
		for _, o := range loginOutcomes {
			a.logins.WithLabelValues(p, o)
		}
	}
	for _, k := range auditKinds {
		a.events.WithLabelValues(string(k))
	}
	return a, nil
}

// Record counts the event and records it.
func (a *auditLog) Record(ctx context.Context, e auth.AuditEvent) error {
	kind := "other"
	if slices.Contains(auditKinds, e.Kind) {
		kind = string(e.Kind)
	}
	a.events.WithLabelValues(kind).Inc()
	if o, ok := loginOutcomes[e.Kind]; ok {
		provider := "other"
		if slices.Contains(auth.Providers, e.Provider) {
			provider = e.Provider
		}
		a.logins.WithLabelValues(provider, o).Inc()
	}
	return a.AuditLog.Record(ctx, e)
}
