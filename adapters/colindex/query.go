package colindex

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// parallelMin is the fewest rows per goroutine worth splitting a count for.
const parallelMin = 65536

// Total counts the selection's interactions.
func (x *Index) Total(ctx context.Context, sel analytics.Selection) (int64, error) {
	defer x.readLock(ctx)()
	p, ok := x.plan(sel)
	if !ok {
		return 0, nil
	}
	var total int64
	switch {
	case len(p.filters) == 0 && !p.checkTime:
		total = int64(p.hi - p.lo)
	case p.usesCube():
		total = p.fromCube(-1, nil)
	case p.postings == nil && !p.checkTime:
		// A scan: count the lists in the same pass if they read the rows too.
		if pass := newPass(p, x.memo.Generation(), p.hi-p.lo); pass != nil {
			pass.forTotal = true
			pass.run()
			x.putPass(sel, pass)
			return pass.total, nil
		}
		fallthrough
	default:
		for _, n := range p.run(nil, 0) {
			total += n[0]
		}
	}
	// Total read few rows or none: the lists' pass waits for them.
	if pass := newPass(p, x.memo.Generation(), 0); pass != nil {
		x.putPass(sel, pass)
	}
	return total, nil
}

// Groups counts the selection's interactions per distinct key and text of
// the dimension.
func (x *Index) Groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	return x.groups(ctx, sel, d, 0)
}

// TopGroups returns the first n groups of Groups in analytics.SortGroups
// order, without building the others (ports.TopAggregator).
func (x *Index) TopGroups(ctx context.Context, sel analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error) {
	if n < 1 {
		return nil, errs.New(errs.KindInvalid, "top groups need n > 0, not %d", n)
	}
	return x.groups(ctx, sel, d, n)
}

// groups counts per group and returns the first limit groups in
// SortGroups order, all of them when limit is 0.
func (x *Index) groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension, limit int) ([]analytics.Group, error) {
	if d < 0 || d >= dimensions {
		return nil, errs.New(errs.KindInvalid, "unknown dimension %d", int(d))
	}
	defer x.readLock(ctx)()
	if pass, ok := x.memo.Take(memoKey(sel, d)); ok {
		if counts, ok := pass.list(d); ok {
			return pass.p.cat.dicts[d].sortedGroups(counts, limit), nil
		}
	}
	p, ok := x.plan(sel)
	if !ok {
		return nil, nil
	}
	dict := &p.cat.dicts[d]
	col, size := p.cat.column(d)
	rows := col.len()
	unfiltered := len(p.filters) == 0 && !p.checkTime
	if unfiltered && p.lo == 0 && p.hi == rows {
		return dict.sortedGroups(slices.Clone(p.cat.totals[d]), limit), nil
	}
	if own := slices.Index(cubeDims[:], d); own >= 0 && p.usesCube() {
		counts := make([]int64, dict.len())
		p.fromCube(own, counts)
		return dict.sortedGroups(counts, limit), nil
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
		return dict.sortedGroups(counts, limit), nil
	}
	return dict.sortedGroups(p.cat.fold(d, sum(p.run(col, size))), limit), nil
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
	if len(p.filters) == 1 && !p.checkTime && col != nil {
		countFiltered(counts, col, p.filters[0], lo, hi)
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
