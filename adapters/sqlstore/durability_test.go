package sqlstore_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

func TestReopenKeepsDataAndRollups(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			first, second := sampleLog(300, 0), sampleLog(200, 1)

			s, err := sqlstore.Open(t.Context(), dsn)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			mustAppend(t, s, first)
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}

			reopened := openStore(t, dsn)
			ref := normalized(first)
			expectMatchesReference(t, "raw after restart", reopened, ref)
			expectMatchesReference(t, "rollups after restart", reopened.Rollups(), ref)

			// Appends after the restart land on the same rollup rows and
			// dictionary entries as before it.
			mustAppend(t, reopened, second)
			ref = append(ref, normalized(second)...)
			expectMatchesReference(t, "raw", reopened, ref)
			expectMatchesReference(t, "rollups", reopened.Rollups(), ref)
		})
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			// Concurrent starters on a fresh database: one migrates, the
			// others wait and find the work done.
			var wg sync.WaitGroup
			stores := make([]*sqlstore.Store, 3)
			openErrs := make([]error, 3)
			for k := range stores {
				wg.Go(func() { stores[k], openErrs[k] = sqlstore.Open(t.Context(), dsn) })
			}
			wg.Wait()
			for k, s := range stores {
				if openErrs[k] != nil {
					t.Fatalf("concurrent Open %d: %v", k, openErrs[k])
				}
				t.Cleanup(func() { _ = s.Close() })
			}
			in := sampleLog(50, 0)
			mustAppend(t, stores[0], in)
			again := openStore(t, dsn) // a restart: nothing to migrate, data kept
			if err := again.Ping(t.Context()); err != nil {
				t.Errorf("Ping after reopening: %v", err)
			}
			expectMatchesReference(t, "reopened", again.Rollups(), normalized(in))
			if n := countMigrations(t, b.Name, dsn); n != sqlstore.AnalyticsSteps+sqlstore.DeletionSteps+sqlstore.FunctionSteps {
				t.Errorf("bun_migrations has %d rows, want %d", n, sqlstore.AnalyticsSteps+sqlstore.DeletionSteps+sqlstore.FunctionSteps)
			}
		})
	}
}

// countMigrations reads the migrations table directly.
func countMigrations(t *testing.T, backend, dsn string) int {
	t.Helper()
	driver, source := "pgx", dsn
	if backend == "SQLite" {
		driver, source = sqliteshim.ShimName, strings.TrimPrefix(dsn, "sqlite:")
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatalf("open %s: %v", backend, err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM bun_migrations").Scan(&n); err != nil {
		t.Fatalf("count migrations: %v", err)
	}
	return n
}

func TestConcurrentAppendsKeepRollupsExact(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			stores := []*sqlstore.Store{openStore(t, dsn), openStore(t, dsn)}
			const workers, appends, size = 4, 5, 300
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				ref    []analytics.Interaction
				failed []error
			)
			for w := range workers {
				wg.Go(func() {
					for a := range appends {
						in := sampleLog(size, w*appends+a)
						if _, err := stores[w%2].Append(t.Context(), analytics.Each(in)); err != nil {
							mu.Lock()
							failed = append(failed, err)
							mu.Unlock()
							return
						}
						mu.Lock()
						ref = append(ref, normalized(in)...)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(failed) > 0 {
				t.Fatalf("concurrent Append failed: %v", failed)
			}
			for k, s := range stores {
				expectMatchesReference(t, fmt.Sprintf("store %d raw", k), s, ref)
				expectMatchesReference(t, fmt.Sprintf("store %d rollups", k), s.Rollups(), ref)
			}
		})
	}
}

// TestFailedAppendUndoesFlushedRollups fails an Append after more distinct
// rollup rows than the writer aggregates in memory (20000), so rollup rows,
// blocks and dictionary entries were already written in the transaction
// (on PostgreSQL, after more than one COPY segment).
func TestFailedAppendUndoesFlushedRollups(t *testing.T) {
	t.Parallel() // own stores only
	const distinct = 25000
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := sampleLog(100, 0)
			mustAppend(t, s, in)
			broken := errors.New("disk full")
			many := make([]analytics.Interaction, distinct)
			for k := range many {
				many[k] = analytics.Interaction{
					Time: day0.Add(time.Duration(k) * time.Minute), Cat: "alpha", EventKind: "api",
					Topic: fmt.Sprintf("topic %d", k), Model: "model 0", Persona: "student",
					Question: fmt.Sprintf("question %d?", k), Answer: "answer 1.",
				}
			}
			n, err := s.Append(t.Context(), func(yield func(analytics.Interaction, error) bool) {
				for _, i := range many {
					if !yield(i, nil) {
						return
					}
				}
				yield(analytics.Interaction{}, broken)
			})
			if n != 0 || !errors.Is(err, broken) {
				t.Fatalf("Append = %d, %v; want 0 and the sequence's error", n, err)
			}
			ref := normalized(in)
			expectMatchesReference(t, "raw", s, ref)
			expectMatchesReference(t, "rollups", s.Rollups(), ref)
			// The same rows without the failure are all counted.
			mustAppend(t, s, many)
			ref = normalized(append(in, many...))
			expectMatchesReference(t, "raw after a large append", s, ref)
			expectMatchesReference(t, "rollups after a large append", s.Rollups(), ref)
		})
	}
}

func TestAppendSurvivesPanickingSequence(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := sampleLog(100, 0)
			mustAppend(t, s, in)
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Append swallowed the sequence's panic")
					}
				}()
				_, _ = s.Append(t.Context(), func(yield func(analytics.Interaction, error) bool) {
					for _, i := range sampleLog(2500, 1) {
						if !yield(i, nil) {
							return
						}
					}
					panic("reader crashed")
				})
			}()
			// Nothing of the failed Append stayed, and the store still
			// takes writes: no transaction or lock was left behind.
			more := sampleLog(50, 2)
			mustAppend(t, s, more)
			ref := normalized(append(in, more...))
			expectMatchesReference(t, "raw", s, ref)
			expectMatchesReference(t, "rollups", s.Rollups(), ref)
		})
	}
}

// TestUpgradeFromSchemaMigrations opens, with bun's migrator, databases
// that the releases before it made (schema_migrations): one at the latest
// schema of commit e049dc0 (version 6), whose steps must be recorded and
// none run again, and one at version 1, whose later steps must run and
// backfill its rows.
func TestUpgradeFromSchemaMigrations(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		for _, version := range []int{6, 1} {
			t.Run(fmt.Sprintf("%s/version %d", b.Name, version), func(t *testing.T) {
				dsn := b.DSN(t)
				old, err := sqlstore.OpenLegacy(t.Context(), dsn, version)
				if err != nil {
					t.Fatalf("legacy schema: %v", err)
				}
				in := sampleLog(120, 3)
				if version == 1 {
					err = sqlstore.InsertVersion1(t.Context(), old, in)
				} else {
					err = sqlstore.AppendLegacy(t.Context(), old, in)
				}
				if err != nil {
					t.Fatalf("rows in the legacy schema: %v", err)
				}
				if err := old.Close(); err != nil {
					t.Fatal(err)
				}
				upgraded := openStore(t, dsn)
				if err := upgraded.Ping(t.Context()); err != nil {
					t.Fatalf("Ping after the upgrade: %v", err)
				}
				if n, want := countMigrations(t, b.Name, dsn), sqlstore.AnalyticsSteps+sqlstore.DeletionSteps+sqlstore.FunctionSteps; n != want {
					t.Errorf("bun_migrations has %d rows, want %d", n, want)
				}
				expectMatchesReference(t, "raw", upgraded, normalized(in))
				expectMatchesReference(t, "rollups", upgraded.Rollups(), normalized(in))
				more := sampleLog(40, 11)
				mustAppend(t, upgraded, more)
				ref := append(normalized(in), normalized(more)...)
				expectMatchesReference(t, "raw after an append", upgraded, ref)
				expectMatchesReference(t, "rollups after an append", upgraded.Rollups(), ref)
			})
		}
	}
}

// TestMigrationBackfillsDims upgrades a database that version 1 of the
// schema filled (raw rows without dictionary codes, rollups keyed by all
// five dimensions) and expects both paths to count it exactly.
func TestMigrationBackfillsDims(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			old, err := sqlstore.OpenAtVersion(t.Context(), dsn, 1)
			if err != nil {
				t.Fatalf("open at version 1: %v", err)
			}
			in := sampleLog(120, 3)
			if err := sqlstore.InsertVersion1(t.Context(), old, in); err != nil {
				t.Fatalf("insert version 1 rows: %v", err)
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			upgraded := openStore(t, dsn)
			if err := upgraded.Ping(t.Context()); err != nil {
				t.Fatalf("Ping after the upgrade: %v", err)
			}
			expectMatchesReference(t, "backfilled", upgraded, normalized(in))
			expectMatchesReference(t, "carried-over rollups", upgraded.Rollups(), normalized(in))
			more := sampleLog(40, 11)
			mustAppend(t, upgraded, more)
			all := normalized(append(in, more...))
			expectMatchesReference(t, "backfilled and appended", upgraded, all)
			expectMatchesReference(t, "rollups appended to", upgraded.Rollups(), all)
		})
	}
}

// TestBlocksSpanAppends puts thousands of rows of one CAT on one day, in
// appends of uneven sizes, so that blocks fill, get appended to and split,
// and expects the raw path to count every row exactly once.
func TestBlocksSpanAppends(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := sampleLog(3000, 5)
			for k := range in {
				in[k].Cat = "alpha"
				in[k].Time = day0.Add(time.Duration(k) * 28 * time.Second)
			}
			var stored []analytics.Interaction
			for _, size := range []int{700, 1, 324, 1975} {
				mustAppend(t, s, in[:size])
				stored, in = append(stored, in[:size]...), in[size:]
				expectMatchesReference(t, fmt.Sprintf("after %d rows", len(stored)), s, normalized(stored))
			}
			within := analytics.Selection{Cat: "alpha", Range: analytics.Range{
				Start: day0.Add(3 * time.Hour), End: day0.Add(17*time.Hour + time.Microsecond)}}
			got, err := totalOf(t.Context(), s, within)
			if err != nil {
				t.Fatal(err)
			}
			if want := analytics.CountTotal(normalized(stored), within); got != want || want == 0 {
				t.Errorf("Total within the day = %d, reference %d (want > 0)", got, want)
			}
		})
	}
}
