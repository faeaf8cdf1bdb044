package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
)

// freshDatabase returns the DSN of an empty database for the back end, a
// function measuring its size on disk, and a cleanup. The database is kept
// after the run (for inspection) and replaced by the next run.
func freshDatabase(ctx context.Context, cfg config, backend string) (dsn string, size func(context.Context) (int64, error), cleanup func(), err error) {
	if backend == "sqlite" {
		path := filepath.Join(cfg.workDir, "bench-"+strings.ToLower(cfg.scaleName)+".db")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if cfg.skipImport {
				break
			}
			if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
				return "", nil, nil, err
			}
		}
		size = func(context.Context) (int64, error) {
			var total int64
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if info, err := os.Stat(path + suffix); err == nil {
					total += info.Size()
				}
			}
			return total, nil
		}
		return "sqlite:" + path, size, func() {}, nil
	}

	name := "catbench_" + strings.ToLower(cfg.scaleName)
	admin, err := pgx.Connect(ctx, cfg.postgresDSN)
	if err != nil {
		return "", nil, nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if !cfg.skipImport {
		if err := recreateDatabase(ctx, admin, name); err != nil {
			_ = admin.Close(ctx)
			return "", nil, nil, err
		}
	}
	u, err := url.Parse(cfg.postgresDSN)
	if err != nil {
		_ = admin.Close(ctx)
		return "", nil, nil, fmt.Errorf("PostgreSQL DSN: %w", err)
	}
	u.Path = "/" + name
	size = func(ctx context.Context) (int64, error) {
		var n int64
		err := admin.QueryRow(ctx, "SELECT pg_database_size($1)", name).Scan(&n)
		return n, err
	}
	return u.String(), size, func() { _ = admin.Close(context.Background()) }, nil
}

// recreateDatabase drops the named database if it exists and creates it
// empty.
func recreateDatabase(ctx context.Context, admin *pgx.Conn, name string) error {
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping %s: %w", name, err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	return nil
}
