package colindex_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// synthetic is a colindex.Feed of n demo-like api rows of one CAT over a year:
// questions Zipf-distributed (s = 1.1) over 10k texts plus 5% one-offs,
// answers over 2k texts, 8 topics, 4 models, 4 personas.
type synthetic struct{ n int }

var benchStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (s synthetic) ReadSince(_ context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	if after > 0 {
		return after, nil
	}
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.1, 1, 9_999)
	step := int64(365*24*time.Hour/time.Microsecond) / int64(s.n)
	models := []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "llama-3-70b"}
	personas := []string{"customer", "agent", "developer", "admin"}
	var row analytics.FeedRow
	for k := range s.n {
		q := "How do I fix problem " + strconv.FormatUint(zipf.Uint64(), 10) + "?"
		if r.IntN(20) == 0 {
			q = "one-off question, order #" + strconv.Itoa(k)
		}
		a := r.IntN(2000)
		qi := analytics.Interaction{Question: q, Answer: "Answer " + strconv.Itoa(a)}.Normalize()
		row = analytics.FeedRow{ID: int64(k + 1), Micros: benchStart.UnixMicro() + int64(k)*step, Cat: []byte("support"),
			Topic: []byte("topic-" + strconv.Itoa(a%8)), Model: []byte(models[r.IntN(4)]), Persona: []byte(personas[r.IntN(4)]),
			QuestionID: []byte(qi.QuestionID), Question: []byte(q), AnswerID: []byte(qi.AnswerID), Answer: []byte(qi.Answer)}
		if err := fn(&row); err != nil {
			return int64(k), err
		}
	}
	return int64(s.n), nil
}

// BenchmarkIndexQuery measures what /all_warehouse asks of the index for
// each query mix of the load benchmark, assembled by the core with
// limit=100, over 600k rows (one CAT's share of 1M interactions).
func BenchmarkIndexQuery(b *testing.B) {
	idx, err := colindex.Build(b.Context(), synthetic{n: 600_000})
	if err != nil {
		b.Fatal(err)
	}
	end := benchStart.AddDate(1, 0, 0)
	mid := benchStart.AddDate(0, 6, 0)
	mixes := []struct {
		name string
		q    analytics.Query
	}{
		{"FullRange", analytics.Query{}},
		{"30Days", analytics.Query{Range: analytics.Range{Start: end.AddDate(0, 0, -30), End: end}}},
		{"30DaysTopic", analytics.Query{Range: analytics.Range{Start: end.AddDate(0, 0, -30), End: end},
			Filters: analytics.Filters{Topics: []string{"topic-1"}}}},
		{"TwoModelsPersona", analytics.Query{Filters: analytics.Filters{Models: []string{"gpt-4o", "claude-3-5-sonnet"}, Personas: []string{"customer"}}}},
		{"OneQuestion", analytics.Query{Filters: analytics.Filters{QuestionIDs: []string{analytics.Interaction{Question: "How do I fix problem 1?"}.Normalize().QuestionID}}}},
		{"StartOnly", analytics.Query{Range: analytics.Range{Start: mid}}},
		{"EndOnly", analytics.Query{Range: analytics.Range{End: mid}}},
	}
	for _, m := range mixes {
		q := m.q
		q.Cat, q.Limit = "support", 100
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := result(b.Context(), idx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// result answers a query from the index in one call, as the reporter
// does, and assembles the result.
func result(ctx context.Context, idx *colindex.Index, q analytics.Query) (analytics.Result, error) {
	c, err := idx.Answer(ctx, q, analytics.AllParts)
	if err != nil {
		return analytics.Result{}, err
	}
	return analytics.Assemble(c, q.Limit), nil
}

// BenchmarkBuild measures building the index from 600k rows: the
// start-up cost per 600k rows, without the database's share.
func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := colindex.Build(b.Context(), synthetic{n: 600_000}); err != nil {
			b.Fatal(err)
		}
	}
}

// lateSource is the synthetic rows followed by rows added during the
// benchmark, numbered after them.
type lateSource struct {
	synthetic
	late []analytics.FeedRow
}

func (s *lateSource) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	high, err := s.synthetic.ReadSince(ctx, after, fn)
	if err != nil {
		return high, err
	}
	for k := range s.late {
		if r := &s.late[k]; r.ID > high {
			if err := fn(r); err != nil {
				return high, err
			}
			high = r.ID
		}
	}
	return high, nil
}

// BenchmarkLateAppend measures the chat path when every interaction
// arrives late: over 1M rows, refresh the index with one row older than
// the newest (by an hour, or by 300 days: a suffix of most of the CAT),
// then answer a 30-day query with limit=100. InOrder is the same with
// a row an hour newer than the newest, for comparison.
func BenchmarkLateAppend(b *testing.B) {
	const rows = 1_000_000
	hour := int64(time.Hour / time.Microsecond)
	newest := benchStart.UnixMicro() + int64(rows-1)*(int64(365*24*time.Hour/time.Microsecond)/rows)
	end := benchStart.AddDate(1, 0, 0)
	q := analytics.Query{Cat: "support", Limit: 100, Range: analytics.Range{Start: end.AddDate(0, 0, -30), End: end}}
	for _, c := range []struct {
		name   string
		micros int64
	}{{"InOrder", newest + hour}, {"Hour", newest - hour}, {"300Days", newest - 300*24*hour}} {
		b.Run(c.name, func(b *testing.B) {
			src := &lateSource{synthetic: synthetic{n: rows}}
			idx, err := colindex.Build(b.Context(), src)
			if err != nil {
				b.Fatal(err)
			}
			id := int64(rows)
			for b.Loop() {
				id++
				src.late = append(src.late[:0], analytics.FeedRow{ID: id, Micros: c.micros,
					Cat: []byte("support"), Topic: []byte("topic-1"), Model: []byte("gpt-4o"), Persona: []byte("agent"),
					QuestionID: []byte("late-q"), Question: []byte("a late question"), AnswerID: []byte("late-a"), Answer: []byte("a late answer")})
				if err := idx.Refresh(b.Context()); err != nil {
					b.Fatal(err)
				}
				if _, err := result(b.Context(), idx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
