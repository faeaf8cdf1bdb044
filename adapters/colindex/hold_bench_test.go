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
				if c, _ := idx.Answer(b.Context(), analytics.Query{Cat: "support"}, analytics.PartTotal); c.Total != 900_000 {
					b.Fatalf("total = %d after the refresh, want 900000", c.Total)
				}
			}
			b.ReportMetric(float64(hold.Microseconds())/1000/float64(b.N), "hold-ms")
		})
	}
}

// growingSource is demo-like rows of one CAT: base rows over a year, then,
// once grown, more rows committed by another process, either newer than
// the base or spread over the same year (most of them late).
type growingSource struct {
	base, more int
	spread     bool
	grown      bool
}

func (s *growingSource) ReadSince(_ context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	n := s.base
	if s.grown {
		n += s.more
	}
	year := int64(365 * 24 * time.Hour / time.Microsecond)
	step := year / int64(s.base)
	r := rand.New(rand.NewPCG(uint64(after), 3)) // #nosec G115 -- a seed
	zipf := rand.NewZipf(r, 1.1, 1, 9_999)
	models := []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "llama-3-70b"}
	personas := []string{"customer", "agent", "developer", "admin"}
	var row analytics.FeedRow
	for k := int(after); k < n; k++ {
		micros := benchStart.UnixMicro() + int64(k)*step
		switch {
		case k >= s.base && s.spread:
			micros = benchStart.UnixMicro() + r.Int64N(year)
		case k >= s.base:
			micros = benchStart.UnixMicro() + year + int64(k-s.base)*step/2
		}
		q := "How do I fix problem " + strconv.FormatUint(zipf.Uint64(), 10) + "?"
		if r.IntN(20) == 0 {
			q = "one-off question, order #" + strconv.Itoa(k)
		}
		a := r.IntN(2000)
		qi := analytics.Interaction{Question: q, Answer: "Answer " + strconv.Itoa(a)}.Normalize()
		row = analytics.FeedRow{ID: int64(k + 1), Micros: micros, Cat: []byte("support"),
			Topic: []byte("topic-" + strconv.Itoa(a%8)), Model: []byte(models[r.IntN(4)]), Persona: []byte(personas[r.IntN(4)]),
			QuestionID: []byte(qi.QuestionID), Question: []byte(q), AnswerID: []byte(qi.AnswerID), Answer: []byte(qi.Answer)}
		if err := fn(&row); err != nil {
			return int64(k), err
		}
	}
	return int64(n), nil
}
