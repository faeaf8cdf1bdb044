package colindex

import (
	"slices"
	"sort"

	"github.com/catsrv/catsrv/core/analytics"
)

// cube counts a CAT's rows per UTC day and (topic, model, persona)
// combination: a few hundred cells a day, however many rows. A request without question or
// answer filters, over whole days, gets its total and its topic, model and
// persona lists from the cube without reading a row; only its question and
// answer lists are counted from the columns. Each cell also sums its
// rows' usage, so /usage over whole days reads cells, not rows.
type cube struct {
	days []dayCells // ordered by day
}

type dayCells struct {
	day   int64
	cells []cell
	// index is the cell position by combination while the day gets rows;
	// compact drops it, and a late row of the day builds it again.
	index map[uint32]int32
}

type cell struct {
	combo               uint32
	n                   int64
	input, output, cost int64
	// lat counts the cell's rows by latency code, code 0 (none) left
	// out: each entry is code<<16 | count, in order; a code whose count
	// passes 0xFFFF takes another entry.
	lat []uint32
}

// addLatency counts one row of the latency code.
func (cl *cell) addLatency(code uint32) {
	if code == 0 {
		return
	}
	key := code << 16
	at, _ := slices.BinarySearch(cl.lat, key)
	for k := at; k < len(cl.lat) && cl.lat[k]>>16 == code; k++ {
		if cl.lat[k]&0xFFFF < 0xFFFF {
			cl.lat[k]++
			return
		}
	}
	cl.lat = slices.Insert(cl.lat, at, key|1)
}

// dayMicros is one day in microseconds.
const dayMicros = 86_400_000_000

// dayOf returns the UTC day of a time in microseconds, rounding down.
func dayOf(micros int64) int64 {
	d := micros / dayMicros
	if micros%dayMicros < 0 {
		d--
	}
	return d
}

// add counts one row of the time, combination and usage.
func (c *cube) add(micros int64, combo uint32, use rowUsage) {
	cl := c.cell(dayOf(micros), combo)
	cl.n++
	cl.input += use.input
	cl.output += use.output
	cl.cost += use.cost
	cl.addLatency(use.latency)
}

// cell returns the day's cell of the combination, adding it.
func (c *cube) cell(day int64, combo uint32) *cell {
	k := len(c.days) - 1
	if k < 0 || c.days[k].day != day {
		k = c.search(day)
		if k == len(c.days) || c.days[k].day != day {
			if k == len(c.days) && k > 0 {
				c.days[k-1].compact() // rows come mostly in time order: a day is done
			}
			c.days = append(c.days, dayCells{})
			copy(c.days[k+1:], c.days[k:])
			c.days[k] = dayCells{day: day}
		}
	}
	dc := &c.days[k]
	if dc.index == nil {
		dc.index = make(map[uint32]int32, len(dc.cells))
		for i, cl := range dc.cells {
			dc.index[cl.combo] = int32(i) // #nosec G115 -- a day has fewer than 2^31 combinations
		}
	}
	i, ok := dc.index[combo]
	if !ok {
		i = int32(len(dc.cells)) // #nosec G115 -- a day has fewer than 2^31 combinations
		dc.index[combo] = i
		dc.cells = append(dc.cells, cell{combo: combo})
	}
	return &dc.cells[i]
}

// search returns the position of the first of the cube's days at or
// after day.
func (c *cube) search(day int64) int {
	return sort.Search(len(c.days), func(i int) bool { return c.days[i].day >= day })
}

// compact moves the day's latency counts into one array, in cell order,
// so that a count over many days reads them in sequence rather than one
// allocation a cell. Each cell's part is full (capacity = length): a cell
// that later gets a new code moves its counts out again. The day's index
// of cells goes: a finished day seldom gets a row.
func (dc *dayCells) compact() {
	dc.index = nil
	n := 0
	for _, cl := range dc.cells {
		n += len(cl.lat)
	}
	all := make([]uint32, 0, n)
	for k := range dc.cells {
		cl := &dc.cells[k]
		from := len(all)
		all = append(all, cl.lat...)
		cl.lat = all[from:len(all):len(all)]
	}
}

// cubeDays returns the cube's days in the plan's range.
func (p plan) cubeDays() []dayCells {
	cb := &p.cat.cube
	lo, hi := 0, len(cb.days)
	if p.start != minMicros {
		lo = cb.search(dayOf(p.start))
	}
	if p.end != maxMicros {
		hi = cb.search(dayOf(p.end))
	}
	return cb.days[lo:max(lo, hi)]
}

// cubeDims are the dimensions the cube holds, in cell order.
var cubeDims = [3]analytics.Dimension{analytics.Topic, analytics.Model, analytics.Persona}

// usesCube reports whether the plan can be answered from the cube: no
// question or answer filter, and a range of whole UTC days.
func (p plan) usesCube() bool {
	if p.allowBy[analytics.Question] != nil || p.allowBy[analytics.Answer] != nil {
		return false
	}
	wholeDay := func(m int64) bool { return m == minMicros || m == maxMicros || m%dayMicros == 0 }
	return wholeDay(p.start) && wholeDay(p.end)
}

// fromCube counts the plan's rows from the cube, every filter of the plan
// applied, and returns the total; with own the index in cubeDims of a
// dimension (not -1), it also counts that dimension's list into counts.
func (p plan) fromCube(own int, counts []int64) int64 {
	perCombo := make([]int64, len(p.cat.combos))
	for _, dc := range p.cubeDays() {
		for _, c := range dc.cells {
			perCombo[c.combo] += c.n
		}
	}
	var total int64
	for combo, n := range perCombo {
		if p.comboAllowed != nil && p.comboAllowed[combo] == 0 {
			continue
		}
		if own >= 0 {
			counts[p.cat.combos[combo][own]] += n
		}
		total += n
	}
	return total
}
