package analytics_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// benchInteractions returns n normalized api interactions shaped like the
// demo data: questions Zipf-distributed (s = 1.1) over 10k texts plus 5%
// one-offs, answers over 2k texts, 8 topics, 4 models, 4 personas, over a
// year.
func benchInteractions(n int) []analytics.Interaction {
	r := rand.New(rand.NewPCG(7, 11))
	questions := rand.NewZipf(r, 1.1, 1, 9_999)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	step := 365 * 24 * time.Hour / time.Duration(n)
	out := make([]analytics.Interaction, n)
	for k := range out {
		q := fmt.Sprintf("How do I fix problem %d?", questions.Uint64())
		if r.IntN(20) == 0 {
			q = fmt.Sprintf("one-off question, order #%d", k)
		}
		a := r.IntN(2000)
		out[k] = analytics.Interaction{
			Time: start.Add(time.Duration(k) * step), Cat: "support", EventKind: analytics.EventKindAPI,
			Question: q, Answer: fmt.Sprintf("Answer %d", a), Topic: fmt.Sprintf("topic-%d", a%8),
			Model: fmt.Sprintf("model-%d", r.IntN(4)), Persona: fmt.Sprintf("persona-%d", r.IntN(4)),
		}.Normalize()
	}
	return out
}

// BenchmarkAggregate is the reference computation over 100k rows: the
// cost a storage adapter's own aggregation competes with.
func BenchmarkAggregate(b *testing.B) {
	rows := benchInteractions(100_000)
	queries := []struct {
		name string
		q    analytics.Query
	}{
		{"FullRange", analytics.Query{Cat: "support", Limit: 100}},
		{"TwoModelsOnePersona", analytics.Query{Cat: "support", Limit: 100,
			Filters: analytics.Filters{Models: []string{"model-0", "model-1"}, Personas: []string{"persona-0"}}}},
	}
	for _, c := range queries {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				analytics.Aggregate(rows, c.q)
			}
		})
	}
}

// BenchmarkAssemble is the core's share of every analytics request:
// sorting the groups an adapter returns and building the lists. The
// groups are those of a year of 1M demo-like interactions (about 60k
// distinct questions), in no order and already sorted.
func BenchmarkAssemble(b *testing.B) {
	rows := benchInteractions(1_000_000)
	q := analytics.Query{Cat: "support"}
	c := analytics.Counts{Total: int64(len(rows)), Groups: map[analytics.Dimension][]analytics.Group{}}
	for _, d := range analytics.Dimensions {
		c.Groups[d] = analytics.CountGroups(rows, q.SelectionFor(d), d)
	}
	b.Logf("%d question groups, %d answer groups", len(c.Groups[analytics.Question]), len(c.Groups[analytics.Answer]))
	for _, limit := range []int{100, 0} {
		b.Run(fmt.Sprintf("unsorted/limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				analytics.Assemble(c, limit)
			}
		})
	}
	// Groups already in SortGroups order, as the column index returns
	// them: the core's sort is then one linear pass.
	for _, d := range analytics.Dimensions {
		analytics.SortGroups(c.Groups[d])
	}
	for _, limit := range []int{100, 0} {
		b.Run(fmt.Sprintf("sorted/limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				analytics.Assemble(c, limit)
			}
		})
	}
}
