package sqlstore

import (
	"math/rand/v2"
	"testing"
)

// TestCountsInCodeOrder checks a pass's counters against a map: every
// code counted, none twice, in code order, whether it fell in the array
// (codes up to the dictionary's highest when the pass began) or in the
// map (codes added since), and across merged parts.
func TestCountsInCodeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		maxCode := uint64(r.IntN(50))
		parts := []*counter{newCounter(maxCode), newCounter(maxCode)}
		want := map[uint64]int64{}
		for range r.IntN(300) {
			// Codes up to twice the highest: about half in the map.
			code := uint64(r.IntN(int(2*maxCode + 2)))
			n := int64(1 + r.IntN(3))
			parts[r.IntN(2)].add(code, n)
			want[code] += n
		}
		parts[0].merge(parts[1])
		got := parts[0].counts()
		for k := 1; k < len(got); k++ {
			if got[k-1].code >= got[k].code {
				t.Fatalf("round %d: codes out of order or repeated: %v", round, got)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d codes, want %d", round, len(got), len(want))
		}
		for _, c := range got {
			if c.n != want[c.code] {
				t.Fatalf("round %d: code %d counted %d, want %d", round, c.code, c.n, want[c.code])
			}
		}
	}
}
