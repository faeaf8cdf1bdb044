package colindex_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkApplyHold measures the one hold of the write lock in which a
// refresh makes 300k rows another process committed visible in an index
// of 600k (hold-ms): the rows read and coded beforehand, the columns,
// posting lists, totals and cube changed under the lock.
func BenchmarkApplyHold(b *testing.B) {
	for _, spread := range []bool{false, true} {
		name := "Newer"
		if spread {
			name = "Spread"
		}
		b.Run(name, func(b *testing.B) {
			var hold time.Duration
			for range b.N {
				b.StopTimer()
				src := &growingSource{base: 600_000, more: 300_000, spread: spread}
				idx, err := colindex.Build(b.Context(), src)
				if err != nil {
					b.Fatal(err)
				}
				src.grown = true
				b.StartTimer()
				h, err := idx.RefreshHold(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				hold += h
				if n, _ := idx.Total(b.Context(), analytics.Selection{Cat: "support"}); n != 900_000 {
					b.Fatalf("Total = %d after the refresh, want 900000", n)
				}
			}
			b.ReportMetric(float64(hold.Microseconds())/1000/float64(b.N), "hold-ms")
		})
	}
}
