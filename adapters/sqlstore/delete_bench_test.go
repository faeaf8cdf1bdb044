package sqlstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkDeleteRetention deletes the older half of benchLines realistic
// interactions (a year of two CATs: six months of CAT support) as the
// retention job does, in batches of sqlstore.DefaultDeleteBatch, and
// reports the rate in deleted rows/s. BenchmarkDeleteErasure erases one
// user (about 20 rows spread over the year) from the same log. Both also
// report how long a column index over the store then takes to follow
// (rebuilding the CATs that lost rows), in ms.
func BenchmarkDeleteRetention(b *testing.B) {
	benchDelete(b, analytics.Deletion{Cat: "support", Before: time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)})
}

func BenchmarkDeleteErasure(b *testing.B) {
	benchDelete(b, analytics.Deletion{UserID: "user-42"})
}

func benchDelete(b *testing.B, d analytics.Deletion) {
	lines := realisticLog(benchLines)
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) {
			if be.Name == "PostgreSQL" {
				serverDSN(b)
			}
			deleted := 0
			var follow time.Duration
			for range b.N {
				b.StopTimer()
				s, err := sqlstore.Open(b.Context(), be.DSN(b))
				if err != nil {
					b.Fatalf("Open: %v", err)
				}
				if n, err := s.Append(b.Context(), analytics.Each(lines)); err != nil || n != len(lines) {
					b.Fatalf("Append = %d, %v", n, err)
				}
				idx, err := colindex.Build(b.Context(), s)
				if err != nil {
					b.Fatalf("Build: %v", err)
				}
				b.StartTimer()
				n, err := s.DeleteInteractions(b.Context(), d, 0)
				b.StopTimer()
				if err != nil || n == 0 {
					b.Fatalf("DeleteInteractions = %d, %v", n, err)
				}
				deleted += n
				start := time.Now()
				if err := idx.Refresh(b.Context()); err != nil {
					b.Fatalf("Refresh: %v", err)
				}
				follow += time.Since(start)
				if err := s.Close(); err != nil {
					b.Fatalf("Close: %v", err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(deleted)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(deleted)/float64(b.N), "rows/op")
			b.ReportMetric(float64(follow.Milliseconds())/float64(b.N), "index-follow-ms")
		})
	}
}
