package colindex

import (
	"slices"
	"sort"
)

// timeColumn holds the rows' times exactly in four bytes a row: the low
// 32 bits of each time in microseconds, and the high bits once per run of
// consecutive rows that share them. A high value spans about 72 minutes,
// so rows in time order have at most one run per 72 minutes of their
// span (about 7,300 a year), however many rows there are.
type timeColumn struct {
	low  []uint32
	runs []timeRun // ordered by first
}

// timeRun is the rows from first to the next run's first, whose times
// are high<<32 plus their low bits.
type timeRun struct {
	first int
	high  int64
}

func splitMicros(m int64) (high int64, low uint32) {
	return m >> 32, uint32(m) // #nosec G115 -- the low 32 bits, by design
}

func joinMicros(high int64, low uint32) int64 { return high<<32 | int64(low) }

func (t *timeColumn) len() int { return len(t.low) }

// runOf returns the index of the run holding row k.
func (t *timeColumn) runOf(k int) int {
	return sort.Search(len(t.runs), func(j int) bool { return t.runs[j].first > k }) - 1
}

// last returns the time of the last row; the column must not be empty.
func (t *timeColumn) last() int64 {
	return joinMicros(t.runs[len(t.runs)-1].high, t.low[len(t.low)-1])
}

// search returns the first row whose time is at least m, the rows being
// in time order.
func (t *timeColumn) search(m int64) int {
	high, low := splitMicros(m)
	j := sort.Search(len(t.runs), func(j int) bool { return t.runs[j].high >= high })
	if j == len(t.runs) {
		return len(t.low)
	}
	lo, hi := t.runs[j].first, t.end(j)
	if t.runs[j].high > high {
		return lo
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return t.low[lo+k] >= low })
}

// end returns the row after run j's last.
func (t *timeColumn) end(j int) int {
	if j+1 < len(t.runs) {
		return t.runs[j+1].first
	}
	return len(t.low)
}

// insert puts time m at row position at, moving the later rows by one.
func (t *timeColumn) insert(at int, m int64) {
	high, low := splitMicros(m)
	if at == len(t.low) { // the usual case: a row in time order, last
		t.low = append(t.low, low)
		if n := len(t.runs); n == 0 || t.runs[n-1].high != high {
			t.runs = append(t.runs, timeRun{first: at, high: high})
		}
		return
	}
	t.low = slices.Insert(t.low, at, low)
	// j is the run the new row joins, or where a new run starts.
	j := len(t.runs)
	switch {
	case at > 0 && t.runs[t.runOf(at-1)].high == high:
		j = t.runOf(at - 1)
	case at < len(t.low)-1 && t.runs[t.runOf(at)].first == at && t.runs[t.runOf(at)].high == high:
		j = t.runOf(at)
	default:
		if at < len(t.low)-1 {
			j = t.runOf(at)
			if r := t.runs[j]; r.first < at {
				// A row inside a run of another high value (rows out of
				// time order): split the run around it.
				t.runs = slices.Insert(t.runs, j+1, timeRun{first: at, high: r.high})
				j++
			}
		}
		t.runs = slices.Insert(t.runs, j, timeRun{first: at, high: high})
	}
	for k := j + 1; k < len(t.runs); k++ {
		t.runs[k].first++
	}
}

// decode returns the times of rows [lo, hi) into buf, hi-lo at most
// len(buf).
func (t *timeColumn) decode(buf []int64, lo, hi int) []int64 {
	buf = buf[:hi-lo]
	j := t.runOf(lo)
	for k := lo; k < hi; k++ {
		for k >= t.end(j) {
			j++
		}
		buf[k-lo] = joinMicros(t.runs[j].high, t.low[k])
	}
	return buf
}

// all returns every row's time.
func (t *timeColumn) all() []int64 {
	out := make([]int64, 0, len(t.low))
	for j, r := range t.runs {
		for _, low := range t.low[r.first:t.end(j)] {
			out = append(out, joinMicros(r.high, low))
		}
	}
	return out
}

// set replaces the rows' times.
func (t *timeColumn) set(times []int64) {
	t.low, t.runs = make([]uint32, len(times)), nil
	for k, m := range times {
		high, low := splitMicros(m)
		t.low[k] = low
		if len(t.runs) == 0 || t.runs[len(t.runs)-1].high != high {
			t.runs = append(t.runs, timeRun{first: k, high: high})
		}
	}
}

// trim drops the spare capacity that growing left behind.
func (t *timeColumn) trim() { t.low, t.runs = trimmed(t.low), trimmed(t.runs) }
