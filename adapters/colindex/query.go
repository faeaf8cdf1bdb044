package colindex

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// parallelMin is the fewest rows per goroutine worth splitting a count for.
const parallelMin = 65536

var _ ports.RollupStore = (*Index)(nil)

// Answer counts the wanted parts of the query's answer, all under one hold
// of the read lock, so that one answer counts one state of the index: a
// refresh applies before or after it, never between its parts.
func (x *Index) Answer(_ context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	return x.answer(q, want), nil
}

// answer is Answer.
func (x *Index) answer(q analytics.Query, want analytics.Parts) analytics.Counts {
	out := analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}
	if want == 0 {
		return out
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if want.Has(analytics.PartTotal) {
		if p, ok := x.plan(q.Selection()); ok {
			out.Total = p.total()
		}
	}
	lists := want.Lists()
	for _, d := range analytics.Dimensions {
		if lists[d] {
			out.Groups[d] = x.groups(q.SelectionFor(d), d, q.LimitOf(d), true)
		}
	}
	return out
}

// total counts the plan's rows.
func (p plan) total() int64 {
	switch {
	case len(p.filters) == 0 && !p.checkTime:
		return int64(p.hi - p.lo)
	case p.usesCube():
		return p.fromCube(-1, nil)
	}
	var total int64
	for _, n := range p.run(nil, 0) {
		total += n[0]
	}
	return total
}

// groups counts the selection's rows per group of the dimension and
// returns the first limit groups in SortGroups order, all of them when
// limit is 0, from the codes counted most when tryTop is set and they
// answer (see plan.top). The caller holds the read lock.
func (x *Index) groups(sel analytics.Selection, d analytics.Dimension, limit int, tryTop bool) []analytics.Group {
	p, ok := x.plan(sel)
	if !ok {
		return nil
	}
	if tryTop {
		if top, ok := p.top(d, limit); ok {
			return top
		}
	}
	dict := &p.cat.dicts[d]
	col, size := p.cat.column(d)
	rows := col.len()
	unfiltered := len(p.filters) == 0 && !p.checkTime
	if unfiltered && p.lo == 0 && p.hi == rows {
		return dict.sortedGroups(p.cat.totals[d], limit) // read only
	}
	if own := slices.Index(cubeDims[:], d); own >= 0 && p.usesCube() {
		counts := make([]int64, dict.len())
		p.fromCube(own, counts)
		return dict.sortedGroups(counts, limit)
	}
	if counts, ok := p.byComboOnly(d); ok {
		return dict.sortedGroups(counts, limit)
	}
	if unfiltered && rows-(p.hi-p.lo) < p.hi-p.lo {
		// Most of the CAT: count the rows outside the range and take them
		// from the CAT's running totals (the full range reads no row).
		counts := slices.Clone(p.cat.totals[d])
		for _, out := range [2]plan{{cat: p.cat, lo: 0, hi: p.lo}, {cat: p.cat, lo: p.hi, hi: rows}} {
			if out.lo == out.hi {
				continue
			}
			for code, n := range p.cat.fold(d, sum(out.run(col, size))) {
				counts[code] -= n
			}
		}
		return dict.sortedGroups(counts, limit)
	}
	return dict.sortedGroups(p.cat.fold(d, sum(p.run(col, size))), limit)
}

// top returns the first limit groups of a question or answer list over
// an unfiltered range from the codes counted most (see heavy.go), giving
// up (ok false) once it has visited a share of the codes that counting
// every code would cost (a thirty-second), or at once when the range has
// too few rows for the limit's lowest count to reach a class.
func (p plan) top(d analytics.Dimension, limit int) ([]analytics.Group, bool) {
	k := slices.Index(postingDims[:], d)
	if k < 0 || limit <= 0 || len(p.filters) > 0 || p.checkTime {
		return nil, false
	}
	span, rows := p.hi-p.lo, p.cat.at.len()
	if span < limit<<heavyFloor {
		// limit codes with 2^heavyFloor rows each would not fit.
		return nil, false
	}
	reads := p.cat.dicts[d].len() + min(span, rows-span)
	return p.topOfRange(k, limit, reads/heavyVisitCost)
}

// sum adds the parts' counts into the first part.
func sum(parts [][]int64) []int64 {
	counts := parts[0]
	for _, more := range parts[1:] {
		for code, n := range more {
			counts[code] += n
		}
	}
	return counts
}

// plan is a selection resolved against one CAT: the slice of rows its
// range covers and a bitmap per filtered dimension.
type plan struct {
	cat       *catIndex
	lo, hi    int
	checkTime bool // the CAT is not in time order: check each row
	start     int64
	end       int64 // exclusive; math.MaxInt64 when open
	filters   []filter
	allowBy   [dimensions][]uint8 // each filter's allow, by dimension; nil when unfiltered
	// comboAllowed is which combinations pass the topic, model and
	// persona filters; nil when there are none.
	comboAllowed []uint8
	// postings, when set, are the positions of the only rows that can
	// match (a selective question or answer filter): count those alone.
	// postingsCol is the column of the filter they come from.
	postings    [][]int32
	postingsCol *codeColumn
}

// filter is one filtered dimension: allow[code] is 1 for the codes of
// the filter's values, 0 otherwise. Bytes rather than booleans let the
// count loops AND them without a branch: with filters that pass rows in
// an unpredictable pattern, branches cost more than the whole count.
type filter struct {
	col   *codeColumn
	allow []uint8
}

// plan resolves the selection; ok is false when it matches nothing.
func (x *Index) plan(sel analytics.Selection) (plan, bool) {
	c := x.cats[sel.Cat]
	if c == nil {
		return plan{}, false
	}
	return planOf(c, sel)
}

// planOf resolves the selection against the CAT's rows c (a CAT or one of
// its rated indexes); ok is false when it matches nothing.
func planOf(c *catIndex, sel analytics.Selection) (plan, bool) {
	p := plan{cat: c, start: minMicros, end: maxMicros, hi: c.at.len()}
	if !sel.Range.Start.IsZero() {
		p.start = ceilMicros(sel.Range.Start)
	}
	if !sel.Range.End.IsZero() {
		p.end = ceilMicros(sel.Range.End)
	}
	if c.sorted {
		p.lo, p.hi = c.at.search(p.start), c.at.search(p.end)
		if p.lo >= p.hi {
			return plan{}, false
		}
	} else {
		p.checkTime = true
	}
	for d := range analytics.Dimension(dimensions) {
		vals := sel.Filters.Values(d)
		if len(vals) == 0 {
			continue
		}
		dict := &c.dicts[d]
		allow := make([]uint8, dict.len())
		matched := false
		for _, v := range vals {
			for code := range dict.codesOf(v) {
				allow[code], matched = 1, true
			}
		}
		if !matched {
			return plan{}, false
		}
		p.allowBy[d] = allow
		if col, _ := c.column(d); col != &c.combo {
			p.filters = append(p.filters, filter{col: col, allow: allow})
		}
	}
	if p.comboAllowed = p.comboAllow(); p.comboAllowed != nil {
		p.filters = append(p.filters, filter{col: &c.combo, allow: p.comboAllowed})
	}
	p.choosePostings(sel.Filters.Values)
	return p, true
}

// comboAllow returns which combinations pass the plan's topic, model
// and persona filters, nil when it has none.
func (p plan) comboAllow() []uint8 {
	var allow []uint8
	for k, d := range cubeDims {
		a := p.allowBy[d]
		if a == nil {
			continue
		}
		if allow == nil {
			allow = make([]uint8, len(p.cat.combos))
			for combo := range allow {
				allow[combo] = 1
			}
		}
		for combo, codes := range p.cat.combos {
			allow[combo] &= a[codes[k]]
		}
	}
	return allow
}

const (
	minMicros = -1 << 63
	maxMicros = 1<<63 - 1
)

// ceilMicros returns the smallest whole microsecond not before t: a row
// at microsecond m is at or after t exactly when m >= ceilMicros(t).
func ceilMicros(t time.Time) int64 {
	m := t.UnixMicro() // floor
	if t.Nanosecond()%1000 != 0 {
		m++
	}
	return m
}

// run counts the plan's matching rows, split over the cores when there
// are many. With col nil it counts rows (one counter per part); otherwise
// it counts per code of col, size codes. It returns one count slice per
// part.
func (p plan) run(col *codeColumn, size int) [][]int64 {
	if p.postings != nil {
		counts := make([]int64, max(size, 1))
		p.countPostings(counts, col)
		return [][]int64{counts}
	}
	n := p.hi - p.lo
	parts := max(1, min(runtime.GOMAXPROCS(0), n/parallelMin))
	out := make([][]int64, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo := p.lo + n*k/parts
		hi := p.lo + n*(k+1)/parts
		counts := make([]int64, max(size, 1))
		out[k] = counts
		if k == parts-1 {
			p.count(counts, col, lo, hi)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.count(counts, col, lo, hi)
		}()
	}
	wg.Wait()
	return out
}

// count adds the matching rows of [lo, hi) to counts: per code of col, or
// all to counts[0] when col is nil.
func (p plan) count(counts []int64, col *codeColumn, lo, hi int) {
	if len(p.filters) == 0 && !p.checkTime {
		if col == nil {
			counts[0] += int64(hi - lo)
			return
		}
		countBlock(counts, nil, col, lo, hi)
		return
	}
	pass := make([]uint8, blockRows)
	var times []int64
	if p.checkTime {
		times = make([]int64, blockRows)
	}
	for from := lo; from < hi; from += blockRows {
		to := min(from+blockRows, hi)
		pass := pass[:to-from]
		for k := range pass {
			pass[k] = 1
		}
		if p.checkTime {
			filterTimes(pass, p.cat.at.decode(times, from, to), p.start, p.end)
		}
		for _, f := range p.filters {
			filterBlock(pass, f.allow, f.col, from)
		}
		if col == nil {
			counts[0] += sumPass(pass)
		} else {
			countBlock(counts, pass, col, from, to)
		}
	}
}
