package sqlstore_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkIndexStart builds the column index over a store of realistic
// interactions (200,000 by default, SQLSTORE_BENCH_ROWS) the two ways:
// way=snapshot from the store's snapshot (ReadSnapshot: dims_blocks and
// the dictionaries read whole) and then the feed, way=feed from the whole
// feed (every row's texts). The snapshot stays only while it earns at
// least 2x here.
func BenchmarkIndexStart(b *testing.B) {
	rows := 200_000
	if v, err := strconv.Atoi(os.Getenv("SQLSTORE_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	lines := realisticLog(rows)
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) {
			if be.Name == "PostgreSQL" {
				serverDSN(b)
			}
			s := openStore(b, be.DSN(b))
			if n, err := s.Load(b.Context(), analytics.Each(lines)); err != nil || n != len(lines) {
				b.Fatalf("Load = %d, %v", n, err)
			}
			for _, way := range []string{"snapshot", "feed"} {
				var src colindex.Feed = s
				if way == "feed" {
					src = feedOnly{s, s}
				}
				b.Run("way="+way, func(b *testing.B) {
					for b.Loop() {
						if _, err := colindex.Build(b.Context(), src); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

var _ colindex.Snapshot = (*sqlstore.Store)(nil)
