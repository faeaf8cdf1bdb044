package colindex

import (
	"maps"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestCubeCellCountsLatencies checks a cell's latency counts past one
// entry's limit (0xFFFF rows of a code), in code order, with no entry for
// rows without a latency.
func TestCubeCellCountsLatencies(t *testing.T) {
	var c cube
	add := func(code uint32, n int) {
		for range n {
			c.add(passDay.UnixMicro(), 3, rowUsage{input: 2, latency: code})
		}
	}
	add(7, 70_000)
	add(2, 3)
	add(0, 5)
	add(9, 1)
	add(7, 0xFFFF)
	cl := c.cell(dayOf(passDay.UnixMicro()), 3)
	counts := map[uint32]int64{}
	for _, e := range cl.lat {
		counts[e>>16] += int64(e & 0xFFFF)
	}
	want := map[uint32]int64{7: 70_000 + 0xFFFF, 2: 3, 9: 1}
	if !maps.Equal(counts, want) {
		t.Fatalf("counts by code %v, want %v", counts, want)
	}
	if !slices.IsSortedFunc(cl.lat, func(a, b uint32) int { return int(a>>16) - int(b>>16) }) {
		t.Fatalf("entries not in code order: %x", cl.lat)
	}
	if total := int64(70_000 + 0xFFFF + 9); cl.n != total || cl.input != 2*total {
		t.Fatalf("cell n %d input %d, want %d and %d", cl.n, cl.input, total, 2*total)
	}
	if got := len(c.days); got != 1 {
		t.Fatalf("%d days, want 1", got)
	}
	if analytics.LatencyBuckets+1 > 0xFFFF {
		t.Fatalf("%d latency codes do not fit an entry's 16 bits", analytics.LatencyBuckets+1)
	}
}

// TestCubeLateRowJoinsItsCell adds a row to a day the cube has finished
// (a later day started, dropping the day's index of cells) and expects
// it counted in the cell its combination already has there.
func TestCubeLateRowJoinsItsCell(t *testing.T) {
	var c cube
	day := passDay.UnixMicro()
	c.add(day, 1, rowUsage{input: 1, latency: 5})
	c.add(day, 2, rowUsage{input: 2})
	c.add(day+dayMicros, 1, rowUsage{input: 4}) // the next day: day is done
	if c.days[0].index != nil {
		t.Fatal("a finished day keeps its index of cells")
	}
	c.add(day+7, 1, rowUsage{input: 8, latency: 5})
	cells := c.days[0].cells
	if len(cells) != 2 {
		t.Fatalf("the late row's day has %d cells, want 2: %+v", len(cells), cells)
	}
	if cl := cells[0]; cl.combo != 1 || cl.n != 2 || cl.input != 9 || !slices.Equal(cl.lat, []uint32{5<<16 | 2}) {
		t.Errorf("combination 1's cell %+v, want 2 rows, 9 input tokens, latency 5 twice", cl)
	}
}
