package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/retention"
	"github.com/catsrv/catsrv/ports"
)

// startRetention starts the retention job (docs/operations.md,
// "Retention"): a pass now, then every interval (0: never), deleting what
// the CATs' analytics.retention_days and chat.retention_days no longer
// keep, one instance at a time per database (the store's job lock). With
// the column index as warehouse, deletions reach it before each deletion
// returns. The returned stop ends the job and waits for a pass in
// progress.
func startRetention(ctx context.Context, interval time.Duration, cats ports.CatDirectory, store *sqlstore.Store,
	rollups ports.RollupStore, convs ports.ConversationPruner, logger *slog.Logger,
) (stop func()) {
	if interval == 0 {
		logger.Info("retention job off (CATSRV_RETENTION_INTERVAL=off): nothing is deleted for retention")
		return func() {}
	}
	var eraser ports.InteractionEraser = store
	if idx, ok := rollups.(*colindex.Index); ok {
		eraser = colindex.Eraser{InteractionEraser: store, Index: idx}
	}
	p := retention.New(retention.Deps{
		Cats: cats, Interactions: eraser, Conversations: convs, Lock: store, Clock: clock.System{},
		Batch: retention.DefaultBatch,
	})
	ctx, cancel := context.WithCancel(ctx)
	ticker := time.NewTicker(interval)
	var wg sync.WaitGroup
	wg.Go(func() {
		p.Run(ctx, ticker.C, func(r retention.Report, err error) {
			switch {
			case err != nil:
				logger.Error("retention pass failed; retried at the next pass", "error", err,
					"interactions", r.Interactions, "conversations", r.Conversations)
			case r.Interactions > 0 || r.Conversations > 0:
				logger.Info("retention pass", "interactions", r.Interactions, "conversations", r.Conversations)
			}
		})
	})
	return func() { cancel(); ticker.Stop(); wg.Wait() }
}
