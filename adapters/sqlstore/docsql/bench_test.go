package docsql_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore/docsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/knowledge"
)

var benchWords = strings.Fields(`hub light plug sensor lock scene automation firmware update reset factory network wifi
	router cable port battery power warranty repair privacy data account member device pair button ring green orange red
	blue white install app settings security energy motion door window schedule sunrise sunset away holiday guest`)

// benchDoc is a document of 10 chunks of about 120 words each.
func benchDoc(r *rand.Rand, i int) knowledge.Document {
	d := knowledge.Document{Cat: "bench", Title: fmt.Sprintf("doc %d", i), Origin: "upload", Format: knowledge.FormatMarkdown, CreatedAt: time.Unix(int64(i), 0).UTC()}
	d.ID = knowledge.ContentID([]byte(d.Title))
	for c := range 10 {
		var b strings.Builder
		for w := range 120 {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchWords[r.IntN(len(benchWords))])
		}
		fmt.Fprintf(&b, " doc%dchunk%d", i, c)
		text := b.String()
		d.Chunks = append(d.Chunks, knowledge.Chunk{ID: knowledge.ChunkID(d.ID, c), Index: c, HeadingPath: []string{d.Title}, Text: text, Tokens: 130, Hash: knowledge.Hash(text)})
	}
	d.ChunkCount = len(d.Chunks)
	return d
}

// BenchmarkDocuments measures, per database, storing documents of 10
// chunks (keyword index included) and a keyword search over docs*10
// chunks whose words are all common (the worst case of an OR query:
// nearly every chunk matches and is scored).
func BenchmarkDocuments(b *testing.B) {
	for _, be := range sqltest.Backends() {
		for _, docs := range []int{1000, 10_000} {
			b.Run(fmt.Sprintf("%s/docs=%d", be.Name, docs), func(b *testing.B) {
				if testing.Short() && docs > 1000 {
					b.Skip("10,000 documents: not under -short")
				}
				s := sqltest.Open(b, be.DSN(b))
				store, err := docsql.Open(b.Context(), s)
				if err != nil {
					b.Fatal(err)
				}
				r := rand.New(rand.NewPCG(3, 4))
				start := time.Now()
				for i := range docs {
					if _, err := store.PutDocument(b.Context(), benchDoc(r, i)); err != nil {
						b.Fatal(err)
					}
				}
				rate := float64(docs) / time.Since(start).Seconds()
				b.ResetTimer()
				for b.Loop() {
					q := []string{benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], fmt.Sprintf("doc%dchunk%d", r.IntN(docs), r.IntN(10))}
					if _, err := store.SearchChunks(b.Context(), "bench", q, 20); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(rate, "ingest-docs/s") // after ResetTimer, which drops reported metrics
			})
		}
	}
}
