// Package sqltest gives the SQL adapters' tests fresh databases: a new
// SQLite file, or an isolated schema on the PostgreSQL server named by
// CATSRV_TEST_POSTGRES_DSN. Without that variable the PostgreSQL tests skip,
// except under CI=true, where they fail: a skipped back end must not look
// like a green one.
package sqltest

import (
	"context"
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
// when the test ends (unless keep, given the name, took it), and returns
// the name and the server's DSN.
func create(t testing.TB, kind, drop string, keep func(name string) bool, then ...string) (name string, base *url.URL) {
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
		if keep != nil && keep(name) {
			return
		}
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
// several packages can share one server. Open on this DSN, before anything
// else has used it, may swap in a migrated schema from the pool under the
// same name, and the schema may go back to the pool when the test ends
// (see pool.go).
func PostgresDSN(t testing.TB) string {
	t.Helper()
	var dsn string
	schema, u := create(t, "SCHEMA", "CASCADE", func(name string) bool {
		forget(dsn)
		return release(name)
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dsn = u.String()
	markFresh(dsn)
	return dsn
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
	name, u := create(t, "DATABASE", "WITH (FORCE)", nil, alter...)
	u.Path = "/" + name
	return u.String()
}

// SQLiteDSN returns the DSN of a new SQLite file in a directory that does
// not exist yet (sqlstore.Open creates it).
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "data", "catsrv.db")
}

// Component is a schema component besides the interaction log's, which
// Open brings up to date on the store it opens.
type Component struct {
	// Name tells the pooled schemas of different components apart.
	Name string
	// Migrate brings the component's schema up to date on the store:
	// the component's own Open.
	Migrate func(ctx context.Context, s *sqlstore.Store) error
}

// Open opens a store on the DSN, brings the components' schemas up to
// date on it (in order), and closes it when the test ends. On a schema of
// PostgresDSN that nothing has used yet, it first swaps in one from the
// pool migrated with the same components, if there is one (see pool.go):
// the store opens as on a fresh schema, without running the migrations
// again.
func Open(t testing.TB, dsn string, components ...Component) *sqlstore.Store {
	t.Helper()
	if takeFresh(dsn) {
		swapIn(t, dsn, components)
	}
	s, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, c := range components {
		if err := c.Migrate(t.Context(), s); err != nil {
			t.Fatalf("Open %s: %v", c.Name, err)
		}
	}
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
