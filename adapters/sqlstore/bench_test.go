package sqlstore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// benchLines is the size of one benchmarked import.
const benchLines = 100_000

// realisticLog returns n interactions shaped like a real import: ordered by
// time over a year, Zipf-distributed among 10k questions and 2k answers,
// 8 topics, 4 models, 4 personas, 2 CATs, about 5% non-api events.
func realisticLog(n int) []analytics.Interaction {
	r := rand.New(rand.NewPCG(1, 2))
	questions := rand.NewZipf(r, 1.1, 1, 9_999)
	answers := rand.NewZipf(r, 1.1, 1, 1_999)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 10)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	step := 365 * 24 * time.Hour / time.Duration(n)
	out := make([]analytics.Interaction, n)
	for k := range out {
		q, a := questions.Uint64(), answers.Uint64()
		kind := analytics.EventKindAPI
		if r.IntN(20) == 0 {
			kind = "feedback"
		}
		out[k] = analytics.Interaction{
			Time:           start.Add(time.Duration(k)*step + time.Duration(r.Int64N(int64(step)))),
			Cat:            []string{"support", "sales"}[r.IntN(2)],
			EventKind:      kind,
			Question:       fmt.Sprintf("How do I solve problem number %d with my account?", q),
			Answer:         fmt.Sprintf("Answer %d: %s", a, filler),
			Topic:          fmt.Sprintf("topic-%d", (q+a)%8),
			Model:          fmt.Sprintf("model-%d", r.IntN(4)),
			Persona:        fmt.Sprintf("persona-%d", r.IntN(4)),
			UserID:         fmt.Sprintf("user-%d", r.IntN(5000)),
			ConversationID: fmt.Sprintf("conv-%d", k/4),
		}
	}
	return out
}

// BenchmarkAppend imports benchLines realistic interactions into an empty
// store per iteration, through the writer (Append) and the importer
// (Load), and reports the rate in lines/s.
func BenchmarkAppend(b *testing.B) {
	lines := realisticLog(benchLines)
	for _, be := range backends {
		for _, path := range []string{"Append", "Load"} {
			b.Run(be.Name+"/"+path, func(b *testing.B) {
				if be.Name == "PostgreSQL" {
					serverDSN(b)
				}
				for range b.N {
					b.StopTimer()
					s, err := sqlstore.Open(b.Context(), be.DSN(b))
					if err != nil {
						b.Fatalf("Open: %v", err)
					}
					write := s.Append
					if path == "Load" {
						write = s.Load
					}
					b.StartTimer()
					n, err := write(b.Context(), analytics.Each(lines))
					b.StopTimer()
					if err != nil || n != len(lines) {
						b.Fatalf("%s = %d, %v", path, n, err)
					}
					if err := s.Close(); err != nil {
						b.Fatalf("Close: %v", err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(len(lines)*b.N)/b.Elapsed().Seconds(), "lines/s")
			})
		}
	}
}

// BenchmarkAppendBatches appends batches of 1000 realistic interactions,
// each with its own interaction id, to one store: the store's share of
// ingestion over HTTP (one transaction, and one id lookup, per batch).
func BenchmarkAppendBatches(b *testing.B) {
	const batch = 1000
	lines := realisticLog(batch * 20)
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) {
			if be.Name == "PostgreSQL" {
				serverDSN(b)
			}
			s := openStore(b, be.DSN(b))
			b.ResetTimer()
			for n := range b.N {
				in := slices.Clone(lines[(n%20)*batch : (n%20+1)*batch])
				for k := range in {
					in[k].InteractionID = fmt.Sprintf("id-%d-%d", n, k)
				}
				if got, err := s.Append(b.Context(), analytics.Each(in)); err != nil || got != batch {
					b.Fatalf("Append = %d, %v", got, err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
