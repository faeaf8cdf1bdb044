package main

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
)

// TestRegistryFollowsPrometheusConventions: the registry serve builds
// (process, Go, HTTP, pool, index, chat model and auth metrics) passes
// promlint: names, units, suffixes and help texts as Prometheus expects.
func TestRegistryFollowsPrometheusConventions(t *testing.T) {
	t.Parallel()
	store, err := sqlstore.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	rollups, err := warehouse(t.Context(), "index", time.Second, store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := telemetry.NewRegistry()
	if _, err := instrument(reg, store, rollups); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.ChatModel(reg, openai.New(openai.Options{})); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.AuditLog(reg, memstore.NewAuth()); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.IngestLog(reg, store); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	info := buildinfo.Get()
	want := fmt.Sprintf("# HELP catsrv_build_info The running build: always 1, labelled by its version, commit and Go version.\n"+
		"# TYPE catsrv_build_info gauge\ncatsrv_build_info{commit=%q,goversion=%q,version=%q} 1\n", info.Commit, info.GoVersion, info.Version)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "catsrv_build_info"); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"catsrv_index_lag_rows", "catsrv_index_lag_seconds", "go_sql_in_use_connections", "catsrv_auth_logins_total", "catsrv_chat_model_requests_total", "catsrv_ingest_lines_total", "process_start_time_seconds"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
			t.Errorf("%s: %d series (%v)", name, n, err)
		}
	}
}
