package jsonl_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
)

// benchInput is n lines shaped like `catsrv demo` output.
func benchInput(n int) []byte {
	var buf []byte
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range n {
		buf = jsonl.AppendLine(buf, analytics.Interaction{
			Time: start.Add(time.Duration(k) * 1234567 * time.Microsecond), Cat: "demo", EventKind: "api",
			Question: fmt.Sprintf("How do I reset my password for the mobile app (%d)?", k%1000),
			Answer:   fmt.Sprintf("Open Settings, then Account, then choose Reset password; we email you a link (%d).", k%200),
			Topic:    "account", Model: "gpt-4o-mini", Persona: "customer",
			UserID: fmt.Sprintf("u-%06d", k%5000), ConversationID: fmt.Sprintf("conv-%016x", k/3),
		})
	}
	return buf
}

func BenchmarkDecode(b *testing.B) {
	const lines = 10000
	input := benchInput(lines)
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for l := range jsonl.Decode(bytes.NewReader(input)) {
			if l.Err != nil {
				b.Fatal(l.Err)
			}
			n++
		}
		if n != lines {
			b.Fatalf("decoded %d lines", n)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkEncode(b *testing.B) {
	i := analytics.Interaction{
		Time: time.Date(2025, 1, 1, 10, 0, 0, 123000000, time.UTC), Cat: "demo", EventKind: "api",
		Question: "How do I reset my password for the mobile app?", Answer: "Open Settings, then Account.",
		Topic: "account", Model: "gpt-4o-mini", Persona: "customer", UserID: "u-000001", ConversationID: "conv-1",
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = jsonl.AppendLine(buf[:0], i)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
