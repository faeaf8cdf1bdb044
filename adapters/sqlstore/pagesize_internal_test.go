package sqlstore

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun/driver/sqliteshim"
)

// TestNewSQLiteDatabasePageSize: a database the store creates has
// sqlitePageSize pages and is in WAL mode; one that exists keeps its page
// size.
func TestNewSQLiteDatabasePageSize(t *testing.T) {
	pragmas := func(t *testing.T, s *Store) (int, string) {
		t.Helper()
		var size int
		var mode string
		if err := s.db.DB.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&size); err != nil {
			t.Fatal(err)
		}
		if err := s.db.DB.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return size, mode
	}
	fresh := filepath.Join(t.TempDir(), "sub", "fresh.db")
	s, err := Open(t.Context(), "sqlite:"+fresh)
	if err != nil {
		t.Fatal(err)
	}
	if size, mode := pragmas(t, s); size != sqlitePageSize || mode != "wal" {
		t.Errorf("new database: page size %d, journal mode %q; want %d, wal", size, mode, sqlitePageSize)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	old := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open(sqliteshim.ShimName, "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), "PRAGMA page_size = 4096; CREATE TABLE other (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), "sqlite:"+old)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if size, mode := pragmas(t, s); size != 4096 || mode != "wal" {
		t.Errorf("existing database: page size %d, journal mode %q; want 4096, wal", size, mode)
	}
}
