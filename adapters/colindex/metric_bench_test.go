package colindex_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkScaleMetric measures what the metric routes ask of the index
// per query mix of BenchmarkScaleQuery (limit=100): the total alone
// (/metrics/total_interactions) and the question list alone
// (/questions), each one Answer call for its own part.
func BenchmarkScaleMetric(b *testing.B) {
	idx := scaleIndex(b)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end, mid := start.AddDate(1, 0, 0), start.AddDate(0, 6, 0)
	mixes := []struct {
		name string
		q    analytics.Query
	}{
		{"30DaysTopic", analytics.Query{Range: analytics.Range{Start: end.AddDate(0, 0, -30), End: end},
			Filters: analytics.Filters{Topics: []string{"topic-1"}}}},
		{"TopQuestion", analytics.Query{Filters: analytics.Filters{QuestionIDs: []string{string(hexID("q-", 0))}}}},
		{"StartOnlyMidDay", analytics.Query{Range: analytics.Range{Start: mid.Add(13 * time.Hour)}}},
	}
	for _, m := range mixes {
		q := m.q
		q.Cat, q.Limit = "support", 100
		for _, part := range []struct {
			name string
			want analytics.Parts
		}{{"Total", analytics.PartTotal}, {"Questions", analytics.ListOf(analytics.Question)}} {
			b.Run(m.name+"/"+part.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := idx.Answer(b.Context(), q, part.want); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
