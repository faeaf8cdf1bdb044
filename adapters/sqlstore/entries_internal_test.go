package sqlstore

import (
	"bytes"
	"fmt"
	"testing"
)

// TestEntriesKeyedByDigest: entries numbers an entry by its dictionary and
// digest, the dictionaries' own identity (dictEntry.digest), keeps its
// text and key until settle, and numbers the same entry once.
func TestEntriesKeyedByDigest(t *testing.T) {
	e := newEntries()
	var all []dictEntry
	for i := range 50 {
		all = append(all,
			dictEntry{table: 3, cat: "c", id: fmt.Sprint("q", i), text: fmt.Sprint("question ", i)},
			dictEntry{table: 0, cat: "c", id: fmt.Sprint("t", i%3), text: fmt.Sprint("t", i%3)},
			// The same texts in another dictionary are another entry.
			dictEntry{table: 2, cat: "c", id: fmt.Sprint("t", i%3), text: fmt.Sprint("t", i%3)},
		)
	}
	numbers := map[int32]dictEntry{}
	for round := range 2 {
		for _, d := range all {
			n := e.number(d)
			if prev, ok := numbers[n]; ok && prev != d {
				t.Fatalf("round %d: %+v and %+v share number %d", round, prev, d, n)
			}
			numbers[n] = d
			if round > 0 {
				continue // settled: no key or text kept
			}
			if !bytes.Equal(e.digest(n), d.digest()) || e.table(n) != d.table {
				t.Fatalf("entry %d: key %x/%d, want %x/%d", n, e.digest(n), e.table(n), d.digest(), d.table)
			}
			if e.text(n) != d {
				t.Fatalf("entry %d: text %+v, want %+v", n, e.text(n), d)
			}
		}
		if want := 50 + 3 + 3; len(numbers) != want {
			t.Fatalf("round %d: %d entries, want %d", round, len(numbers), want)
		}
		if round == 1 && len(e.pending) != 0 {
			t.Fatalf("known entries numbered again: %d pending", len(e.pending))
		}
		e.pending = e.pending[:0]
		e.settle()
		if len(e.fresh) != 0 {
			t.Fatalf("settle kept %d texts", len(e.fresh))
		}
	}
	// A new entry after settle has its text.
	d := dictEntry{table: 4, cat: "c", id: "a", text: "answer"}
	if n := e.number(d); e.text(n) != d {
		t.Fatalf("new entry %d: text %+v", n, e.text(n))
	}
}
