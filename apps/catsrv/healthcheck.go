package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
)

// healthcheckTimeout bounds one check.
const healthcheckTimeout = 5 * time.Second

// healthcheckCmd asks a serve on this host for GET /healthz and succeeds
// on 200: the container image's HEALTHCHECK, which has no curl (FROM
// scratch). The address is serve's (--addr, CATSRV_ADDR), a wildcard host
// asked on loopback.
func healthcheckCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	fs := newFlags("healthcheck")
	config.AddFlags(fs.FlagSet, "addr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.misuse("healthcheck takes no arguments")
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("the address %q is not HOST:PORT: %w", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	_, err = fmt.Fprintln(stdout, "ok", url)
	return err
}
