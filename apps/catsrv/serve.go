package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/web"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/ports"
)

// shutdownGrace is how long in-flight requests get after SIGTERM.
const shutdownGrace = 15 * time.Second

func serveCmd(ctx context.Context, args []string, env environ, stderr io.Writer) error {
	fs := newFlags("serve")
	config.AddFlags(fs.FlagSet, "config", "db", "addr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.misuse("serve takes no arguments")
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))

	cats, err := loadCats(cfg)
	if err != nil {
		return err
	}
	configured, err := cats.Cats(ctx)
	if err != nil {
		return err
	}
	toks, err := tokenService(cfg)
	if err != nil {
		return err
	}
	store, err := sqlstore.Open(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	rollups, err := warehouse(ctx, cfg.Warehouse, store, logger)
	if err != nil {
		return err
	}
	authDeps, err := authDeps(ctx, cfg, cats, toks, store, logger)
	if err != nil {
		return err
	}
	stopPruner, err := startAuditPruner(ctx, cfg.AuditRetention, store, logger)
	if err != nil {
		return err
	}
	defer stopPruner()
	chats, err := chatsql.Open(ctx, store, chatsql.Options{AfterCommit: indexRefresher(rollups, logger)})
	if err != nil {
		return fmt.Errorf("opening the conversation store: %w", err)
	}
	// The effective CAT configuration: the files with the runtime changes
	// of POST /api/v1/cat/config/sync, persisted in the database.
	catConfig, err := overlay.Load(ctx, cats, chats)
	if err != nil {
		return fmt.Errorf("loading runtime CAT configuration: %w", err)
	}
	chatService, err := service.New(service.Deps{
		Cats: catConfig, Conversations: chats, Turns: chats,
		Model:     openai.New(openai.Options{APIKey: cfg.AgentKey}),
		Knowledge: knowledge.New(cfg.ConfigDir),
		Clock:     clock.System{},
	})
	if err != nil {
		return err
	}

	restore := httpapi.UseSpecErrors()
	defer restore()
	_, handler := httpapi.New(httpapi.Deps{
		Reporter:     reporter.New(catConfig, store, rollups, clock.System{}),
		Tokens:       toks,
		Ready:        store.Ping,
		Logger:       logger,
		Browser:      store,
		Ingest:       ingestLog(store, rollups),
		IngestLimits: analyticsapi.IngestLimits{MaxBytes: cfg.IngestMaxBytes, MaxLines: cfg.IngestMaxLines},
		Dashboard:    web.Assets(),
		Auth:         authDeps,
		Chat: &chatapi.Deps{
			Service: chatService, Config: catConfig, Memory: authDeps.Memory, DefaultCat: authDeps.DefaultCat,
			AgentKeySet: func(cat string) bool { return cfg.AgentKey(cat) != "" },
		},
	})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("catsrv serving", "url", "http://"+ln.Addr().String(), "database", store.Dialect(), "cats", len(configured))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// indexRefresher returns what a committed chat turn calls so the column
// index (when it is the warehouse) counts the turn's interaction at once
// rather than at its next poll; nil for the SQL rollups, which the turn's
// own transaction updates. A failed refresh is retried by the poll.
// ingestLog is the log ingestion over HTTP writes to: the store, and when
// the column index serves the rollups, through colindex.Log, so that the
// index has the batch before the response goes out.
func ingestLog(store *sqlstore.Store, rollups ports.RollupStore) ports.InteractionLog {
	if idx, ok := rollups.(*colindex.Index); ok {
		return colindex.Log{InteractionLog: store, Index: idx}
	}
	return store
}

func indexRefresher(rollups ports.RollupStore, logger *slog.Logger) func(context.Context) {
	idx, ok := rollups.(*colindex.Index)
	if !ok {
		return nil
	}
	return func(ctx context.Context) {
		if err := idx.Refresh(ctx); err != nil {
			logger.Warn("column index refresh after a chat failed", "error", err)
		}
	}
}
