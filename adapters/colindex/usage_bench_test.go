package colindex_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"syscall"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// usageSource is synthetic's rows with usage and ratings: tokens in the
// thousands, costs of cents, log-normal latencies around a second, 10%
// rated up and 3% down; none when bare.
type usageSource struct {
	n       int
	bare    bool
	unrated bool
}

func (s usageSource) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	r := rand.New(rand.NewPCG(3, 4))
	return synthetic{n: s.n}.ReadSince(ctx, after, func(row *analytics.FeedRow) error {
		if !s.bare {
			row.InputTokens, row.OutputTokens = r.Int64N(4000), r.Int64N(1500)
			row.CostNanos = r.Int64N(50_000_000)
			row.LatencyBucket = int32(analytics.LatencyBucket(math.Exp(7+r.NormFloat64()))) + 1 // #nosec G115 -- a bucket
			switch p := r.IntN(100); {
			case s.unrated:
			case p < 10:
				row.Rating = analytics.RatingCodeUp
			case p < 13:
				row.Rating = analytics.RatingCodeDown
			}
		}
		return fn(row)
	})
}

// BenchmarkUsage measures CountUsage over 1M rows of one CAT over a
// year, grouped by model and by day: the whole year, the last 30 days,
// and one busy question over the year.
func BenchmarkUsage(b *testing.B) {
	idx, err := colindex.Build(b.Context(), usageSource{n: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the build's garbage, not the counts' to collect
	end := benchStart.AddDate(1, 0, 0)
	busy := analytics.Interaction{Question: "How do I fix problem 1?"}.Normalize().QuestionID
	for _, g := range []struct {
		name string
		by   analytics.GroupBy
	}{{"model", analytics.GroupModel}, {"day", analytics.GroupDay}} {
		for _, sel := range []struct {
			name    string
			r       analytics.Range
			filters analytics.Filters
		}{
			{"year", analytics.Range{}, analytics.Filters{}},
			{"30days", analytics.Range{Start: end.AddDate(0, 0, -30), End: end}, analytics.Filters{}},
			{"busyQuestion", analytics.Range{}, analytics.Filters{QuestionIDs: []string{busy}}},
		} {
			q := analytics.UsageQuery{Cat: "support", Range: sel.r, Filters: sel.filters, GroupBy: g.by}
			b.Run(g.name+"/"+sel.name, func(b *testing.B) {
				cpu := processCPU()
				for b.Loop() {
					c, err := idx.CountUsage(b.Context(), q)
					if err != nil || c.Total.Interactions == 0 || c.Total.Up == 0 {
						b.Fatalf("CountUsage: %+v, %v", c.Total, err)
					}
				}
				// The CPU time of a count, all cores, which other processes'
				// load does not inflate as it does the wall time.
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkUsageWays times /usage's worst make-bench mix (two models and
// a persona, by day, over the year) and a 30-day count by model, from the
// cube's cells against the plain scan of the rows, over 1M rows of one
// CAT, after checking that both ways give the same groups.
func BenchmarkUsageWays(b *testing.B) {
	idx, err := colindex.Build(b.Context(), usageSource{n: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	end := benchStart.AddDate(1, 0, 0)
	for _, c := range []struct {
		name string
		q    analytics.UsageQuery
	}{
		{"TwoModelsPersonaByDay", analytics.UsageQuery{Cat: "support", GroupBy: analytics.GroupDay,
			Filters: analytics.Filters{Models: []string{"gpt-4o", "claude-3-5-sonnet"}, Personas: []string{"customer"}}}},
		{"30DaysByModel", analytics.UsageQuery{Cat: "support", GroupBy: analytics.GroupModel,
			Range: analytics.Range{Start: end.AddDate(0, 0, -30), End: end}}},
		{"YearByDay", analytics.UsageQuery{Cat: "support", GroupBy: analytics.GroupDay}},
		{"YearByModel", analytics.UsageQuery{Cat: "support", GroupBy: analytics.GroupModel}},
		{"YearTopicByModel", analytics.UsageQuery{Cat: "support", GroupBy: analytics.GroupModel,
			Filters: analytics.Filters{Topics: []string{"topic-1"}}}},
	} {
		cubed, ok := idx.UsageWay("cube", c.q)
		scanned, _ := idx.UsageWay("scan", c.q)
		if !ok || len(cubed.Groups) == 0 || !reflect.DeepEqual(cubed, scanned) {
			b.Fatalf("%s: the cube gives %+v, the scan %+v", c.name, cubed, scanned)
		}
		for _, way := range []string{"cube", "scan"} {
			b.Run(c.name+"/way="+way, func(b *testing.B) {
				for b.Loop() {
					idx.UsageWay(way, c.q)
				}
			})
		}
	}
}

// BenchmarkTokensSince measures the monthly budget's question, a CAT's
// tokens since the start of a month, over 1M rows of one CAT.
func BenchmarkTokensSince(b *testing.B) {
	idx, err := colindex.Build(b.Context(), usageSource{n: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	tokens := colindex.Tokens{Index: idx}
	month := benchStart.AddDate(0, 11, 0)
	for b.Loop() {
		if n, err := tokens.TokensSince(b.Context(), "support", "", month); err != nil || n == 0 {
			b.Fatalf("TokensSince: %d, %v", n, err)
		}
	}
}

// BenchmarkUsageMemory reports the heap the usage columns (usage-B/row)
// and the rated indexes add per row: 1M rows built with usage, without
// and with ratings, less the same rows bare.
func BenchmarkUsageMemory(b *testing.B) {
	const rows = 1_000_000
	heap := func(src colindex.Feed) int64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		idx, err := colindex.Build(context.Background(), src)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(idx)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc) // #nosec G115 -- heap sizes
	}
	for b.Loop() {
		bare := heap(usageSource{n: rows, bare: true})
		unrated := heap(usageSource{n: rows, unrated: true})
		full := heap(usageSource{n: rows})
		b.ReportMetric(float64(unrated-bare)/rows, "usage-B/row")
		b.ReportMetric(float64(full-unrated)/rows, "ratings-B/row")
		b.ReportMetric(float64(full)/rows, "total-B/row")
	}
}

// processCPU returns the process's user and system CPU time in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
