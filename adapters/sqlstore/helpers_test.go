package sqlstore_test

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
)

// postgresEnv names the DSN of the PostgreSQL server tests may use.
const postgresEnv = "CATSRV_TEST_POSTGRES_DSN"

// serverDSN returns the test server's DSN, or skips the test when none is
// configured (fails it instead under CI=true, where skipping would hide a
// broken setup).
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set, and CI=true requires the PostgreSQL tests", postgresEnv)
		}
		t.Skipf("%s is not set: skipping PostgreSQL tests", postgresEnv)
	}
	return dsn
}

// postgresDSN creates an empty schema for one test, dropped when it ends,
// and returns a DSN whose search_path points at it. Tests in other packages
// may share the server: each works in its own schema.
func postgresDSN(t testing.TB) string {
	t.Helper()
	base := serverDSN(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "catsrv_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", postgresEnv, err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled during cleanup.
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", postgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openStore opens a store on the DSN and closes it when the test ends.
func openStore(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// sqliteDSN returns the DSN of a new SQLite file in a directory that does
// not exist yet (Open creates it).
func sqliteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "data", "catsrv.db")
}

// backend is one database the tests run against.
type backend struct {
	name string
	// dsn returns the DSN of a fresh, empty database.
	dsn func(t testing.TB) string
}

var backends = []backend{
	{"SQLite", sqliteDSN},
	{"PostgreSQL", postgresDSN},
}
