package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
)

// TestIngestBodies: the batches hold only the CAT's lines, each with its
// own interaction_id and a time on the log's last day, and decode as the
// ingestion route decodes them.
func TestIngestBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var log strings.Builder
	for k := range 5000 {
		cat, kind := "support", "api"
		if k%3 == 2 {
			cat = "sales"
		}
		if k%10 == 9 {
			kind = "feedback"
		}
		log.WriteString(`{"time":"2025-01-0` + string(rune('1'+k%9)) + `T10:00:00Z","cat":"` + cat + `","event_kind":"` + kind +
			`","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}` + "\n")
	}
	if err := os.WriteFile(path, []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2025, 2, 1, 10, 0, 0, 0, time.UTC)
	bodies, api, err := ingestBodies(dataset{path: path}, "support", 3, from)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var apiSeen int64
	for _, b := range bodies {
		n := 0
		for line := range jsonl.Decode(bytes.NewReader(b)) {
			n++
			i := line.Interaction
			if line.Err != nil || i.Cat != "support" || i.InteractionID == "" || ids[i.InteractionID] ||
				!i.Time.Equal(from.Add(time.Duration(len(ids))*ingestPace)) {
				t.Fatalf("line %d: %+v, %v", line.No, i, line.Err)
			}
			ids[i.InteractionID] = true
			if i.Counted() {
				apiSeen++
			}
		}
		if n != ingestBatch {
			t.Fatalf("a batch of %d lines", n)
		}
	}
	if len(bodies) != 3 || api != apiSeen {
		t.Fatalf("%d batches, %d api lines counted, %d seen", len(bodies), api, apiSeen)
	}
	if _, _, err := ingestBodies(dataset{path: path}, "support", 4, from); err == nil {
		t.Fatal("4 batches from a log with 3: no error")
	}
}
