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
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/web"
)

// shutdownGrace is how long in-flight requests get after SIGTERM.
const shutdownGrace = 15 * time.Second

func serveCmd(ctx context.Context, args []string, env environ, stderr io.Writer) error {
	fs := newFlags("serve")
	configDir := fs.String("config", env.get("CATSRV_CONFIG_DIR", defaultConfigDir), "directory of <catname>.yaml files")
	dsn := fs.String("db", env.get("CATSRV_DB", defaultDSN), "database: sqlite:PATH or postgres://...")
	addr := fs.String("addr", env.get("CATSRV_ADDR", defaultAddr), "listen address HOST:PORT")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments: %w", errUsage)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))

	cats, err := env.loadCats(*configDir)
	if err != nil {
		return err
	}
	configured, err := cats.Cats(ctx)
	if err != nil {
		return err
	}
	toks, err := env.tokenService()
	if err != nil {
		return err
	}
	store, err := sqlstore.Open(ctx, *dsn)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	rollups, err := warehouse(ctx, env, store, logger)
	if err != nil {
		return err
	}
	authDeps, err := env.authDeps(ctx, *addr, cats, toks, store, logger)
	if err != nil {
		return err
	}

	restore := httpapi.UseSpecErrors()
	defer restore()
	_, handler := httpapi.New(httpapi.Deps{
		Reporter:  reporter.New(cats, store, rollups, clock.System{}),
		Tokens:    toks,
		Ready:     store.Ping,
		Logger:    logger,
		Browser:   store,
		Dashboard: web.Assets(),
		Auth:      authDeps,
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
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
