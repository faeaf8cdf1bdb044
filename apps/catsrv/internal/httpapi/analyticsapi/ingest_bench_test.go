package analyticsapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
)

// benchVocabulary is how many distinct questions the benchmark's lines
// have.
const benchVocabulary = 5000

// BenchmarkIngestHTTP posts batches of 1000 interactions, each line with
// its own interaction_id, to POST /interactions over loopback HTTP, from
// two clients at once, into SQLite and PostgreSQL wired as serve wires
// them (the column index following every batch). It reports
// interactions/s:
//
//	go test -run '^$' -bench IngestHTTP -benchtime 100x ./apps/catsrv/internal/httpapi/analyticsapi/
//
// The questions come from a vocabulary of benchVocabulary texts (a log's
// questions repeat; a new text costs a dictionary entry).
func BenchmarkIngestHTTP(b *testing.B) {
	const batchSize, clients = 1000, 2
	for _, backend := range []string{"SQLite", "PostgreSQL"} {
		b.Run(backend, func(b *testing.B) {
			e := newIngestEnv(b, backend, analyticsapi.IngestLimits{})
			bodies := make([][]byte, b.N)
			for n := range bodies {
				var buf bytes.Buffer
				for k := range batchSize {
					// Texts from a vocabulary of benchVocabulary questions,
					// each line its own id.
					buf.WriteString(line((n*batchSize+k)%benchVocabulary, ingestCat, fmt.Sprintf("bench-%d-%d", n, k)))
					buf.WriteByte('\n')
				}
				bodies[n] = buf.Bytes()
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for {
						n := next.Add(1) - 1
						if n >= int64(len(bodies)) {
							return
						}
						req, _ := http.NewRequest(http.MethodPost, e.url+analyticsapi.Prefix+"/interactions?catname="+ingestCat, bytes.NewReader(bodies[n]))
						req.Header.Set("Authorization", e.admin)
						req.Header.Set("Content-Type", "application/x-ndjson")
						res, err := http.DefaultClient.Do(req)
						if err != nil {
							failed.Store(err.Error())
							return
						}
						body, _ := io.ReadAll(res.Body)
						_ = res.Body.Close()
						if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"stored":1000`) {
							failed.Store(fmt.Sprintf("%d %s", res.StatusCode, body))
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if f := failed.Load(); f != nil {
				b.Fatal(f)
			}
			b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "interactions/s")
		})
	}
}
