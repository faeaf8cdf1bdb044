package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/auth/retention"
)

// maxAuthBurst bounds CATSRV_AUTH_RATE_BURST.
const maxAuthBurst = 100000

// authRateLimit reads CATSRV_AUTH_RATE_LIMIT (requests per second per
// client address; 0 or off turns the limit off) and CATSRV_AUTH_RATE_BURST
// (how many at once), docs/auth.md "Rate limits".
func (e environ) authRateLimit() (httpapi.RateLimit, error) {
	var rl httpapi.RateLimit
	switch v := strings.TrimSpace(e.get("CATSRV_AUTH_RATE_LIMIT", "")); v {
	case "":
		rl.PerSecond = httpapi.DefaultAuthRate
	case "0", "off":
		rl.Disabled = true
	default:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1e6) {
			return rl, fmt.Errorf("CATSRV_AUTH_RATE_LIMIT must be a number of requests per second per client address (e.g. 1 or 0.5), or off")
		}
		rl.PerSecond = f
	}
	rl.Burst = httpapi.DefaultAuthBurst
	if v := e.get("CATSRV_AUTH_RATE_BURST", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuthBurst {
			return rl, fmt.Errorf("CATSRV_AUTH_RATE_BURST must be a whole number of requests between 1 and %d", maxAuthBurst)
		}
		rl.Burst = n
	}
	return rl, nil
}

// auditRetention reads CATSRV_AUDIT_RETENTION: a Go duration of at least
// an hour (2160h) or whole days (90d); 0 or off keeps the audit log
// forever. Default retention.DefaultRetention (90 days).
func (e environ) auditRetention() (time.Duration, error) {
	v := strings.TrimSpace(e.get("CATSRV_AUDIT_RETENTION", ""))
	bad := fmt.Errorf("CATSRV_AUDIT_RETENTION must be whole days (90d) or a duration of at least 1h (2160h), or off")
	switch {
	case v == "":
		return retention.DefaultRetention, nil
	case v == "0" || v == "off":
		return 0, nil
	case strings.HasSuffix(v, "d"):
		days, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err != nil || days < 1 || days > 100*365 {
			return 0, bad
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Hour {
		return 0, bad
	}
	return d, nil
}

// startAuditPruner starts the background pruning of the audit log (once
// now, then every retention.DefaultInterval) unless CATSRV_AUDIT_RETENTION
// is off. The returned stop ends it and waits for a pass in progress.
func (e environ) startAuditPruner(ctx context.Context, store *sqlstore.Store, logger *slog.Logger) (stop func(), err error) {
	keep, err := e.auditRetention()
	if err != nil {
		return nil, err
	}
	if keep == 0 {
		logger.Info("audit retention off: the audit log is kept forever")
		return func() {}, nil
	}
	records, err := authsql.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("auth tables: %w", err)
	}
	p, err := retention.New(records, clock.System{}, keep, retention.DefaultBatch)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ticker := time.NewTicker(retention.DefaultInterval)
	var wg sync.WaitGroup
	wg.Go(func() {
		p.Run(ctx, ticker.C, func(n int, err error) {
			switch {
			case err != nil:
				logger.Error("audit log pruning failed; retried at the next pass", "error", err)
			case n > 0:
				logger.Info("audit log pruned", "deleted", n, "retention", keep.String())
			}
		})
	})
	return func() { cancel(); ticker.Stop(); wg.Wait() }, nil
}
