package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/docsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/apps/catsrv/web"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	chatagent "github.com/catsrv/catsrv/core/chat/agent"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/ports"
)

// shutdownGrace is how long in-flight requests get after SIGTERM.
const shutdownGrace = 15 * time.Second

// serveGCPercent is the server's garbage-collection target (Go's default
// is 100). The column index is most of what a server keeps alive, and at
// 100 the heap grows by as much again before a collection: at 50 the
// resident set stays nearer the index, for collections twice as often,
// which cost little since the index's columns hold no pointers. GOGC,
// when set, wins.
const serveGCPercent = 50

func serveCmd(ctx context.Context, args []string, env environ, stderr io.Writer) error {
	return serveHeld(ctx, args, env, stderr, nil)
}

// serveHeld is serveCmd with beforeIndexBuild, when not nil, run before
// the column index's first read: a test holds the start there to see the
// instance starting.
func serveHeld(ctx context.Context, args []string, env environ, stderr io.Writer, beforeIndexBuild func(context.Context)) error {
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
	if cfg.GOGC == "" {
		debug.SetGCPercent(serveGCPercent)
	}

	// The listener opens first: while the rest starts (above all the
	// column index's first read, seconds at millions of rows) the gate
	// answers /healthz 200, /readyz and every other route 503, so probes
	// and clients get an answer instead of a refused connection.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	gate := &httpapi.Gate{}
	srv := &http.Server{
		Addr:              ln.Addr().String(), // for the log lines: Serve uses ln
		Handler:           gate,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("catsrv starting", "url", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	defer func() { _ = srv.Close() }() // after a failed start; a no-op after Shutdown
	return serveUntilDone(ctx, cfg, logger, srv, gate, errc, beforeIndexBuild)
}

// serveUntilDone builds the app behind the open gate, opens the gate,
// and serves until ctx ends (then shuts the server down gracefully) or
// the server fails.
func serveUntilDone(ctx context.Context, cfg *config.Config, logger *slog.Logger, srv *http.Server, gate *httpapi.Gate, errc <-chan error,
	beforeIndexBuild func(context.Context)) error {
	cats, err := loadCats(cfg)
	if err != nil {
		return err
	}
	configured, err := cats.Cats(ctx)
	if err != nil {
		return err
	}
	if len(configured) == 0 {
		// Not fatal (a CAT file may be added and picked up by a restart),
		// but every CAT-scoped request answers "unknown CAT" meanwhile.
		logger.Warn("no CAT configured: the configuration directory holds no <catname>.yaml file; every CAT-scoped request will answer unknown CAT",
			"config_dir", cfg.ConfigDir)
	}
	toks, err := tokenService(cfg)
	if err != nil {
		return err
	}
	tracer, stopTracing, err := startTracing(ctx, cfg.OTLPEndpoint, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	var storeOpts []sqlstore.Option
	if tracer != nil {
		storeOpts = append(storeOpts, sqlstore.Traced(tracer.Tracer))
	}
	store, err := sqlstore.Open(ctx, cfg.DB, storeOpts...)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	rollups, err := warehouse(ctx, cfg.Warehouse, cfg.IndexPoll, store, logger, beforeIndexBuild)
	if err != nil {
		return err
	}
	// The process's metrics, in a registry of its own: served at
	// CATSRV_METRICS_ADDR when it is set (serveMetrics).
	reg := telemetry.NewRegistry()
	requestMetrics, err := instrument(reg, store, rollups)
	if err != nil {
		return err
	}
	ingestLog, err := telemetry.IngestLog(reg, store)
	if err != nil {
		return err
	}
	var auditLog ports.AuditLog // the agent's tool calls go to the same audit log
	authDeps, err := authDeps(ctx, cfg, cats, toks, store, logger, func(a ports.AuditLog) (ports.AuditLog, error) {
		var err error
		auditLog, err = telemetry.AuditLog(reg, a)
		return auditLog, err
	})
	if err != nil {
		return err
	}
	stopPruner, err := startAuditPruner(ctx, cfg.AuditRetention, store, logger)
	if err != nil {
		return err
	}
	defer stopPruner()
	chats, err := chatsql.Open(ctx, store)
	if err != nil {
		return fmt.Errorf("opening the conversation store: %w", err)
	}
	// The effective CAT configuration: the files with the runtime changes
	// of POST /api/v1/cat/config/sync, persisted in the database.
	catConfig, err := overlay.Load(ctx, cats, chats)
	if err != nil {
		return fmt.Errorf("loading runtime CAT configuration: %w", err)
	}
	stopFollower := followCatConfig(ctx, cfg, catConfig, logger)
	defer stopFollower()
	var agent ports.ChatModel = openai.New(openai.Options{APIKey: cfg.AgentKey})
	if tracer != nil {
		agent = telemetry.TracedChatModel(tracer.Tracer, agent)
	}
	model, err := telemetry.ChatModel(reg, agent)
	if err != nil {
		return err
	}
	if authDeps.Privacy, err = privacyService(ctx, store, chats, rollups); err != nil {
		return err
	}
	stopRetention := startRetention(ctx, cfg.RetentionInterval, catConfig, store, rollups, chats, logger)
	defer stopRetention()
	// The agent's MCP tools; their servers stop after the HTTP server.
	toolbox, stopTools, err := agentTools(cfg, configured, reg, logger)
	if err != nil {
		return err
	}
	defer stopTools()
	fallbacks, err := telemetry.KnowledgeFallbacks(reg)
	if err != nil {
		return err
	}
	documents, err := documentService(ctx, cfg, store, logger, fallbacks)
	if err != nil {
		return fmt.Errorf("opening the document store: %w", err)
	}
	stopDocuments := syncDocuments(ctx, cfg.ConfigDir, catConfig, documents, logger)
	defer stopDocuments()
	budgetRefused, err := budgetRefusals(reg, configured)
	if err != nil {
		return err
	}
	usage, feedback, tokens := usageDeps(store, rollups)
	kb := knowledge.New(cfg.ConfigDir)
	chatService, err := service.New(service.Deps{
		Cats: catConfig, Conversations: chats, Turns: chats,
		Model:         model,
		Knowledge:     kb,
		Documents:     documents,
		Clock:         clock.System{},
		Toolbox:       toolbox,
		Searcher:      chatagent.Searchers{chatagent.KnowledgeBase{Source: kb}, documents},
		Audit:         auditLog,
		BudgetRefused: budgetRefused,
		Feedback:      feedback,
		Usage:         tokens,
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
		Usage:        usage,
		Ingest:       ingestLog,
		IngestLimits: analyticsapi.IngestLimits{MaxBytes: cfg.IngestMaxBytes, MaxLines: cfg.IngestMaxLines},
		WholeLists:   cfg.RawWholeLists,
		Dashboard:    web.Assets(),
		Auth:         authDeps,
		Chat: &chatapi.Deps{
			Service: chatService, Config: catConfig, Memory: authDeps.Memory, DefaultCat: authDeps.DefaultCat,
			AgentKeySet: func(cat string) bool { return cfg.AgentKey(cat) != "" },
		},
		Documents: &docsapi.Deps{Documents: documents, Cats: catConfig, DefaultCat: authDeps.DefaultCat},
		Metrics:   requestMetrics,
		Tracer:    tracer,
	})

	stopMetrics, err := serveMetrics(cfg.MetricsAddr, reg, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	gate.Open(handler)
	logger.Info("catsrv serving", "url", "http://"+srv.Addr, "database", store.Dialect(), "cats", len(configured))

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

// usageDeps returns what answers /usage and /feedback and what records
// feedback: with the column index as the warehouse, the index counts and
// each feedback change reaches it before SetFeedback returns (this
// process reads its own feedback; others within the refresh interval);
// otherwise the database does both.
func usageDeps(store *sqlstore.Store, rollups ports.RollupStore) (ports.UsageCounter, ports.FeedbackRecorder, ports.TokenUsage) {
	if idx, ok := rollups.(*colindex.Index); ok {
		return idx, colindex.Feedback{FeedbackRecorder: store, Index: idx}, colindex.Tokens{TokenUsage: store, Index: idx}
	}
	return store, store, store
}

// followCatConfig keeps the runtime CAT configuration in step with what
// other instances on the same database save: a poll every
// cfg.CatConfigPoll. The returned function stops it and waits for it.
func followCatConfig(ctx context.Context, cfg *config.Config, dir *overlay.Directory, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		dir.Follow(ctx, cfg.CatConfigPoll, nil, func(err error) {
			logger.Warn("reading runtime CAT configuration changes failed", "error", err)
		})
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// instrument registers on reg the HTTP request metrics, the database
// pool's use and, when the column index is the warehouse, its lag behind
// the database; it returns the request metrics for the HTTP app.
func instrument(reg *prometheus.Registry, store *sqlstore.Store, rollups ports.RollupStore) (*base.RequestMetrics, error) {
	requests, err := base.NewRequestMetrics(reg)
	if err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewDBStatsCollector(store.DB().DB, store.Dialect())); err != nil {
		return nil, err
	}
	if idx, ok := rollups.(*colindex.Index); ok {
		if err := reg.Register(telemetry.IndexLag(idx, store.CountSince)); err != nil {
			return nil, err
		}
	}
	return requests, nil
}

// serveMetrics serves GET /metrics (the registry, in the Prometheus
// format) on a listener of its own at addr, apart from the API and outside
// its OpenAPI document; with addr empty it serves nothing. It returns
// what stops that server.
func serveMetrics(addr string, reg *prometheus.Registry, logger *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s (CATSRV_METRICS_ADDR): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", telemetry.Handler(reg, func(err error) {
		logger.Warn("metrics collection failed", "error", err)
	}))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("metrics serving", "url", "http://"+ln.Addr().String()+"/metrics")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "error", err)
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// tracingFlushGrace bounds the export of the last spans at exit.
const tracingFlushGrace = 5 * time.Second

// startTracing starts OpenTelemetry tracing to the OTLP/HTTP collector at
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT); with endpoint empty it traces
// nothing and returns a nil tracer. stop sends the spans not yet sent.
func startTracing(ctx context.Context, endpoint string, logger *slog.Logger) (tracer *base.Tracer, stop func(), err error) {
	if endpoint == "" {
		return nil, func() {}, nil
	}
	t, err := telemetry.NewTracing(ctx, endpoint, buildinfo.Get().Version)
	if err != nil {
		return nil, nil, err
	}
	logger.Info("tracing to an OTLP collector", "endpoint", endpoint)
	return &base.Tracer{Tracer: t.Tracer(), Propagator: t.Propagator()}, func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), tracingFlushGrace)
		defer cancel()
		if err := t.Shutdown(flushCtx); err != nil {
			logger.Warn("sending the last spans failed", "error", err)
		}
	}, nil
}

// budgetRefusals registers catsrv_budget_refusals_total with a series per
// configured CAT and returns what counts a refused agent turn.
func budgetRefusals(reg prometheus.Registerer, configured []catconfig.Cat) (func(cat, budget string), error) {
	names := make([]string, 0, len(configured))
	for _, c := range configured {
		names = append(names, c.Name)
	}
	return telemetry.BudgetRefusals(reg, names)
}
