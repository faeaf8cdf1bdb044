package chatsql

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catsrv/catsrv/core/errs"
)

// ListenerApplicationName is the application_name of the listening
// connection, so operators (and tests) can tell it apart in
// pg_stat_activity.
const ListenerApplicationName = "catsrv-overrides-listener"

// Listen back-off after a failed connection: from listenRetryMin,
// doubling up to listenRetryMax.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// ListenOverrides holds one dedicated connection to the PostgreSQL
// database dsn names, LISTENs on OverridesChannel and calls wake for every
// notice, until ctx ends. It calls wake also each time it (re)starts
// listening, since notices sent while no connection listened are lost.
// A lost connection (a restart of the server, a killed backend) is
// reported and replaced, with a growing pause between failed attempts.
// It needs its own connection, not one of the pool's: a listening
// connection waits on the server for as long as it lives.
func ListenOverrides(ctx context.Context, dsn string, wake func(), report func(error)) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		report(errs.New(errs.KindInvalid, "listening for configuration changes needs PostgreSQL"))
		return
	}
	pause := listenRetryMin
	for ctx.Err() == nil {
		listening, err := listenOnce(ctx, dsn, wake)
		if ctx.Err() != nil {
			return
		}
		if listening {
			pause = listenRetryMin
		}
		report(err)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, listenRetryMax)
	}
}

// listenOnce connects, listens and waits for notices until the connection
// fails; listening reports whether it got as far as listening.
func listenOnce(ctx context.Context, dsn string, wake func()) (listening bool, err error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, errs.Wrap(errs.KindInvalid, err, "invalid PostgreSQL DSN")
	}
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, errs.Wrap(errs.KindUnavailable, err, "configuration listener: cannot connect")
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+OverridesChannel); err != nil {
		return false, errs.Wrap(errs.KindUnavailable, err, "configuration listener: LISTEN failed")
	}
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return true, err
			}
			return true, errs.Wrap(errs.KindUnavailable, err, "configuration listener: connection lost")
		}
		wake()
	}
}
