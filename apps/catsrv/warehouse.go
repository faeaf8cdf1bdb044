package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/ports"
)

// warehouse returns what /all_warehouse and the metric routes count from:
// by default the in-process column index, built from the database now and
// following it until ctx ends; in mode "sql" (CATSRV_WAREHOUSE) the SQL
// rollups. poll (CATSRV_INDEX_POLL) is how often the index looks for rows
// other processes (catsrv import, other instances on the same PostgreSQL)
// have committed: the bound on how stale /all_warehouse and the metric
// routes can be. beforeBuild, when not nil, runs before the index's first
// read (serveHeld).
func warehouse(ctx context.Context, mode string, poll time.Duration, store *sqlstore.Store, logger *slog.Logger,
	beforeBuild func(context.Context)) (ports.RollupStore, error) {
	if mode == "sql" {
		return store.Rollups(), nil
	}
	start := time.Now()
	if beforeBuild != nil {
		beforeBuild(ctx)
	}
	idx, err := colindex.Build(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("building the column index: %w", err)
	}
	// The build's garbage (the snapshot's dictionaries, decoding buffers,
	// narrower columns widened) goes back to the system now, at the cost
	// of one collection, rather than over minutes by the runtime's
	// scavenger: the resident set after ready is then the index's.
	debug.FreeOSMemory()
	rows, high := idx.Stats()
	logger.Info("column index built", "rows", rows, "high_water", high, "took", time.Since(start).Round(time.Millisecond).String())
	// This process's own writes (chat turns, ingestion over HTTP) are
	// counted as they commit, before the write returns: the instance reads
	// its own writes without waiting for a refresh.
	store.TellCommits(idx.Hold)
	context.AfterFunc(ctx, func() { store.TellCommits(nil) })
	go idx.Follow(ctx, poll, func(err error) {
		logger.Warn("column index refresh failed", "error", err)
	})
	return idx, nil
}
