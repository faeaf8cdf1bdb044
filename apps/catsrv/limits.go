package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth/retention"
)

// authRateLimit is the rate limit of the anonymous auth routes:
// CATSRV_AUTH_RATE_LIMIT (0 is off) and CATSRV_AUTH_RATE_BURST,
// docs/auth.md "Rate limits".
func authRateLimit(cfg *config.Config) authapi.RateLimit {
	return authapi.RateLimit{PerSecond: cfg.AuthRateLimit, Burst: cfg.AuthRateBurst, Disabled: cfg.AuthRateLimit == 0}
}

// startAuditPruner starts the background pruning of the audit log (once
// now, then every retention.DefaultInterval) of events older than keep,
// unless keep is 0 (CATSRV_AUDIT_RETENTION off). The returned stop ends it
// and waits for a pass in progress.
func startAuditPruner(ctx context.Context, keep time.Duration, store *sqlstore.Store, logger *slog.Logger) (stop func(), err error) {
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
