package main

import "testing"

// The import's soft memory limit leaves room for SQLite's memory outside
// the Go heap; PostgreSQL's is in another process.
func TestImportMemoryLimit(t *testing.T) {
	t.Parallel()
	for db, want := range map[string]int64{
		"sqlite:./data/catsrv.db":                   64 << 20,
		"sqlite::memory:":                           64 << 20,
		"postgres://u@127.0.0.1:5432/catsrv":        160 << 20,
		"postgresql://u@127.0.0.1:5432/catsrv?x=on": 160 << 20,
	} {
		if got := importMemoryLimit(db); got != want {
			t.Errorf("importMemoryLimit(%q) = %d MiB, want %d MiB", db, got>>20, want>>20)
		}
	}
}
