package authsql_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for schema setup

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

const postgresEnv = "CATSRV_TEST_POSTGRES_DSN"

// postgresDSN creates an empty schema for one test, dropped when it ends.
// Without a server it skips, but fails under CI=true.
func postgresDSN(t *testing.T) string {
	t.Helper()
	base := os.Getenv(postgresEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set, and CI=true requires the PostgreSQL tests", postgresEnv)
		}
		t.Skipf("%s is not set: skipping PostgreSQL tests", postgresEnv)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "catsrv_auth_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func sqliteDSN(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
}

func open(t *testing.T, dsn string) *authsql.Store {
	t.Helper()
	s, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	a, err := authsql.Open(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	// A second Open finds the schema current and changes nothing.
	if _, err := authsql.Open(t.Context(), s); err != nil {
		t.Fatalf("second Open: %v", err)
	}
	return a
}

var backends = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"SQLite", sqliteDSN},
	{"PostgreSQL", postgresDSN},
}

func TestAuthContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			porttest.TestAuthStore(t, func(t *testing.T) porttest.AuthStore { return open(t, b.dsn(t)) })
		})
	}
}

func TestMemoryContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			porttest.TestMemoryStore(t, func(t *testing.T) ports.MemoryStore { return open(t, b.dsn(t)) })
		})
	}
}
