package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// answerBenchLines is the size of the log BenchmarkAnswer queries.
const answerBenchLines = 200_000

// BenchmarkAnswer measures what /all (the raw pass) and /all_warehouse
// with CATSRV_WAREHOUSE=sql (the rollups) ask of the store per query mix,
// with limit=100, over answerBenchLines realistic lines (two CATs, a year).
func BenchmarkAnswer(b *testing.B) {
	lines := realisticLog(answerBenchLines)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	end, mid := start.AddDate(1, 0, 0), start.AddDate(0, 6, 0)
	last30 := analytics.Range{Start: end.AddDate(0, 0, -30), End: end}
	mixes := []struct {
		name string
		q    analytics.Query
	}{
		{"FullRange", analytics.Query{}},
		{"30Days", analytics.Query{Range: last30}},
		{"30DaysTopic", analytics.Query{Range: last30, Filters: analytics.Filters{Topics: []string{"topic-1"}}}},
		{"TwoModelsPersona", analytics.Query{Filters: analytics.Filters{Models: []string{"model-0", "model-2"}, Personas: []string{"persona-1"}}}},
		{"OneQuestion", analytics.Query{Filters: analytics.Filters{QuestionIDs: []string{
			analytics.DeriveQuestionID("How do I solve problem number 1 with my account?")}}}},
		{"StartOnly", analytics.Query{Range: analytics.Range{Start: mid}}},
	}
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) {
			if be.Name == "PostgreSQL" {
				serverDSN(b)
			}
			s, err := sqlstore.Open(b.Context(), be.DSN(b))
			if err != nil {
				b.Fatalf("Open: %v", err)
			}
			b.Cleanup(func() { _ = s.Close() })
			if n, err := s.Append(b.Context(), analytics.Each(lines)); err != nil || n != len(lines) {
				b.Fatalf("Append = %d, %v", n, err)
			}
			for name, agg := range map[string]ports.Aggregator{"Raw": s, "Rollups": s.Rollups()} {
				for _, m := range mixes {
					q := m.q
					q.Cat, q.Limit = "support", 100
					b.Run(name+"/"+m.name, func(b *testing.B) {
						for b.Loop() {
							if _, err := benchAnswer(b.Context(), agg, q); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		})
	}
}

// benchAnswer answers a query as the reporter does: one call.
func benchAnswer(ctx context.Context, agg ports.Aggregator, q analytics.Query) (analytics.Result, error) {
	c, err := agg.Answer(ctx, q, analytics.AllParts)
	if err != nil {
		return analytics.Result{}, err
	}
	return analytics.Assemble(c, q.Limit), nil
}
