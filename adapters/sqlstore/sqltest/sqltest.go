// Package sqltest gives the SQL adapters' tests fresh databases: a new
// SQLite file, or an isolated schema on the PostgreSQL server named by
// CATSRV_TEST_POSTGRES_DSN. Without that variable the PostgreSQL tests skip,
// except under CI=true, where they fail: a skipped back end must not look
// like a green one.
package sqltest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for schema setup

	"github.com/catsrv/catsrv/adapters/sqlstore"
)

// PostgresEnv names the DSN of the PostgreSQL server tests may use.
const PostgresEnv = "CATSRV_TEST_POSTGRES_DSN"

// ServerDSN returns the test server's DSN, or skips the test when none is
// configured (fails it instead under CI=true).
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(PostgresEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set, and CI=true requires the PostgreSQL tests", PostgresEnv)
		}
		t.Skipf("%s is not set: skipping PostgreSQL tests", PostgresEnv)
	}
	return dsn
}

// create makes a uniquely named object on the test server with the
// statement "CREATE <kind> <name>", runs the statements that follow
// (each with %s for the name), drops it with "DROP <kind> <name> <drop>"
// when the test ends, and returns the name and the server's DSN.
func create(t testing.TB, kind, drop string, then ...string) (name string, base *url.URL) {
	t.Helper()
	dsn := ServerDSN(t)
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name = "catsrv_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", PostgresEnv, err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.ExecContext(t.Context(), "CREATE "+kind+" "+name); err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled during cleanup.
		if _, err := admin.Exec("DROP " + kind + " " + name + " " + drop); err != nil {
			t.Errorf("drop %s %s: %v", kind, name, err)
		}
	})
	for _, stmt := range then {
		if _, err := admin.ExecContext(t.Context(), fmt.Sprintf(stmt, name)); err != nil {
			t.Fatalf("%s: %v", fmt.Sprintf(stmt, name), err)
		}
	}
	base, err = url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	return name, base
}

// PostgresDSN creates an empty schema for one test, dropped when the test
// ends, and returns a DSN whose search_path points at it, so tests of
// several packages can share one server.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	schema, u := create(t, "SCHEMA", "CASCADE")
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresDatabaseDSN creates an empty database for one test, with the
// given database-level defaults (ALTER DATABASE … SET name = value, for
// example standard_conforming_strings off), dropped when the test ends,
// and returns its DSN. Use it where a test needs a server setting a
// schema cannot carry.
func PostgresDatabaseDSN(t testing.TB, settings map[string]string) string {
	t.Helper()
	var alter []string
	for setting, value := range settings {
		alter = append(alter, "ALTER DATABASE %s SET "+setting+" = "+value)
	}
	name, u := create(t, "DATABASE", "WITH (FORCE)", alter...)
	u.Path = "/" + name
	return u.String()
}

// SQLiteDSN returns the DSN of a new SQLite file in a directory that does
// not exist yet (sqlstore.Open creates it).
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "data", "catsrv.db")
}

// Open opens a store on the DSN and closes it when the test ends.
func Open(t testing.TB, dsn string) *sqlstore.Store {
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

// Backend is one database kind the tests run against.
type Backend struct {
	Name string
	// DSN returns the DSN of a fresh, empty database.
	DSN func(t testing.TB) string
}

// Backends lists SQLite and PostgreSQL.
func Backends() []Backend {
	return []Backend{{"SQLite", SQLiteDSN}, {"PostgreSQL", PostgresDSN}}
}
