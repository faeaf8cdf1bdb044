package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkDecodeLine decodes `catsrv demo`-shaped lines (what catsrv
// import reads) the two ways: way=fast is decode (the fast path, fast.go),
// way=plain encoding/json alone; both then check the line the same way.
// The fast path stays only while it earns at least 2x here.
func BenchmarkDecodeLine(b *testing.B) {
	const n = 1000
	var lines [][]byte
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range n {
		line := AppendLine(nil, analytics.Interaction{
			Time: start.Add(time.Duration(k) * 1234567 * time.Microsecond), Cat: "support", EventKind: "api",
			Question: fmt.Sprintf("How do I reset my password for the mobile app (%d)?", k%1000), QuestionID: fmt.Sprintf("q-%04x", k%1000),
			Answer: fmt.Sprintf("Open Settings, then Account, then choose Reset password; we email you a link (%d).", k%200), AnswerID: fmt.Sprintf("a-%04x", k%200),
			Topic: "account", Model: "gpt-4o-mini", Persona: "customer",
			UserID: fmt.Sprintf("u-%06d", k%5000), ConversationID: fmt.Sprintf("conv-%016x", k/3),
		})
		lines = append(lines, bytes.TrimSpace(line))
	}
	ways := map[string]func(ld *lineDecoder, raw []byte) (analytics.Interaction, error){
		"fast": (*lineDecoder).decode,
		"plain": func(ld *lineDecoder, raw []byte) (analytics.Interaction, error) {
			ld.rec = record{}
			if err := json.Unmarshal(raw, &ld.rec); err != nil {
				return analytics.Interaction{}, jsonError(err)
			}
			return ld.interaction()
		},
	}
	for _, way := range []string{"fast", "plain"} {
		b.Run("way="+way, func(b *testing.B) {
			var ld lineDecoder
			b.ReportAllocs()
			for b.Loop() {
				for _, raw := range lines {
					if _, err := ways[way](&ld, raw); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
