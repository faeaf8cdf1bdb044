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

var _ ports.UsageCounter = (*Index)(nil)

// CountUsage counts the usage and feedback of the query's selection, in
// total and per group, under one hold of the read lock (one state of the
// index): the interactions, tokens, cost and latencies from the CAT's
// rows, the ratings from its rated indexes, each counted with the
// selection's plan into arrays by group slot.
func (x *Index) CountUsage(_ context.Context, q analytics.UsageQuery) (analytics.UsageCounts, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.cats[q.Cat]
	if c == nil {
		return analytics.UsageCounts{}, nil
	}
	sel := q.Selection()
	var groups []usageGroup
	if !q.RatingsOnly {
		groups = countGroups(c, sel, q.GroupBy, true)
	}
	var total analytics.UsageSum
	base, width := c.latCodes()
	totalHist := make([]int64, width)
	for _, g := range groups {
		total.Interactions += g.n
		total.InputTokens += g.input
		total.OutputTokens += g.output
		total.CostNanos += g.cost
		for code, n := range g.hist {
			totalHist[code] += n
		}
	}
	if len(groups) == 1 {
		totalHist = groups[0].hist
	}
	total.Latency = latencyOf(totalHist, total.Interactions, base)
	byKey := make(map[string]int, len(groups))
	for k, g := range groups {
		byKey[g.key] = k
	}
	ups := [2]*int64{&total.Up, &total.Down}
	for r, rated := range c.rated {
		if rated == nil {
			continue
		}
		for _, g := range countGroups(rated, sel, q.GroupBy, false) {
			*ups[r] += g.n
			k, ok := byKey[g.key] // a rated row is one of the CAT's
			if !ok {              // RatingsOnly: the groups come from the rated rows
				k = len(groups)
				byKey[g.key] = k
				groups = append(groups, usageGroup{key: g.key})
			}
			groups[k].rated[r] += g.n
		}
	}
	out := analytics.UsageCounts{Total: total.Stats()}
	if q.GroupBy == analytics.GroupNone {
		return out, nil
	}
	out.Groups = make([]analytics.UsageGroup, len(groups))
	for k, g := range groups {
		s := analytics.UsageSum{Interactions: g.n, InputTokens: g.input, OutputTokens: g.output,
			CostNanos: g.cost, Up: g.rated[0], Down: g.rated[1], Latency: latencyOf(g.hist, g.n, base)}
		out.Groups[k] = analytics.UsageGroup{Key: g.key, UsageStats: s.Stats()}
	}
	return out, nil
}

// latencyOf returns the histogram of rows rows counted by latency code
// less base (see catRows.latCodes; 0 for none), sharing its counts.
func latencyOf(byCode []int64, rows int64, base uint32) analytics.LatencyHistogram {
	if len(byCode) < 2 || rows == byCode[0] {
		return analytics.LatencyHistogram{}
	}
	return analytics.LatencyHistogram{Counts: byCode[1:], First: int(base), N: rows - byCode[0]}
}

// usageGroup is one group's sums: hist counts rows by latency code.
type usageGroup struct {
	key                    string
	n, input, output, cost int64
	hist                   []int64
	rated                  [2]int64
}

// countGroups sums the selection's rows of c per group (every group with a
// row); withUsage false counts rows only.
func countGroups(c *catIndex, sel analytics.Selection, by analytics.GroupBy, withUsage bool) []usageGroup {
	p, ok := planOf(c, sel)
	if !ok {
		return nil
	}
	g := p.grouping(by)
	width := 0
	if withUsage {
		_, width = c.latCodes()
	}
	acc := p.runUsage(g, width, withUsage)
	var out []usageGroup
	for slot, n := range acc.n {
		if n == 0 {
			continue
		}
		ug := usageGroup{key: g.key(slot), n: n}
		if withUsage {
			ug.input, ug.output, ug.cost = acc.input[slot], acc.output[slot], acc.cost[slot]
			ug.hist = acc.hist[slot]
		}
		out = append(out, ug)
	}
	return out
}

// grouping maps a plan's rows to group slots: all to slot 0, by the
// combination's code of a dimension (slotOf), or by UTC day from firstDay.
type grouping struct {
	by       analytics.GroupBy
	slots    int
	slotOf   []uint32 // by combination, for model, persona and topic
	dict     *dictionary
	firstDay int64
}

func (p plan) grouping(by analytics.GroupBy) grouping {
	g := grouping{by: by, slots: 1}
	switch by {
	case analytics.GroupModel, analytics.GroupPersona, analytics.GroupTopic:
		d := map[analytics.GroupBy]analytics.Dimension{analytics.GroupModel: analytics.Model,
			analytics.GroupPersona: analytics.Persona, analytics.GroupTopic: analytics.Topic}[by]
		k := slices.Index(cubeDims[:], d)
		g.dict = &p.cat.dicts[d]
		g.slots = g.dict.len()
		g.slotOf = make([]uint32, len(p.cat.combos))
		for combo, codes := range p.cat.combos {
			g.slotOf[combo] = codes[k]
		}
	case analytics.GroupDay:
		if p.cat.at.len() == 0 {
			return g
		}
		first, last := dayOf(p.cat.firstAt), dayOf(p.cat.lastAt)
		if p.start != minMicros {
			first = max(first, dayOf(p.start))
		}
		if p.end != maxMicros {
			last = min(last, dayOf(p.end-1))
		}
		g.firstDay, g.slots = first, max(1, int(last-first+1))
	}
	return g
}

// key returns a slot's group key.
func (g grouping) key(slot int) string {
	switch {
	case g.dict != nil:
		return g.dict.key(uint32(slot)) // #nosec G115 -- a dictionary code
	case g.by == analytics.GroupDay:
		return time.Unix((g.firstDay+int64(slot))*86400, 0).UTC().Format(analytics.DateLayout)
	}
	return ""
}

// usageAcc sums usage per group slot; hist is, per slot, the rows by
// latency code less base (nil until the slot has a row; see
// catRows.latCodes).
type usageAcc struct {
	n, input, output, cost []int64
	hist                   [][]int64
	width                  int
	base                   uint32
	withUsage              bool
	lat                    []uint32 // a block's latency codes
	// flat holds every slot's histogram, when a count by row made them
	// (see addBlockBy); hist's slices are then its parts.
	flat []int64
	// nFromHist is set when n is to be summed from the histograms.
	nFromHist bool
}

func newUsageAcc(c *catIndex, slots, width int, withUsage bool) *usageAcc {
	base, _ := c.latCodes()
	a := &usageAcc{n: make([]int64, slots), width: width, base: base, withUsage: withUsage}
	if withUsage {
		a.input, a.output, a.cost = make([]int64, slots), make([]int64, slots), make([]int64, slots)
		a.hist = make([][]int64, slots)
	}
	return a
}

// histOf returns the slot's histogram, allocating it.
func (a *usageAcc) histOf(slot uint32) []int64 {
	h := a.hist[slot]
	if h == nil {
		h = make([]int64, a.width)
		a.hist[slot] = h
	}
	return h
}

// merge adds b's sums to a's.
func (a *usageAcc) merge(b *usageAcc) {
	for s := range a.n {
		a.n[s] += b.n[s]
		if !a.withUsage {
			continue
		}
		a.input[s] += b.input[s]
		a.output[s] += b.output[s]
		a.cost[s] += b.cost[s]
		if b.hist[s] == nil {
			continue
		}
		h := a.histOf(uint32(s)) // #nosec G115 -- a slot
		for code, n := range b.hist[s] {
			h[code] += n
		}
	}
}

// runUsage sums the plan's matching rows per group: from the cube over
// whole days without a question or answer filter, from the posting lists
// of a selective one, else by a scan split over the cores.
func (p plan) runUsage(g grouping, width int, withUsage bool) *usageAcc {
	switch {
	case p.usesCube() && !p.cat.noCube:
		return p.usageFromCube(g, width, withUsage)
	case p.postings != nil:
		a := newUsageAcc(p.cat, g.slots, width, withUsage)
		p.usagePostings(a, g)
		return a
	}
	return p.usageScan(g, width, withUsage)
}

// usageFromCube sums the cells of the plan's days and combinations per
// group: a few hundred cells a day instead of its rows.
func (p plan) usageFromCube(g grouping, width int, withUsage bool) *usageAcc {
	a := newUsageAcc(p.cat, g.slots, width, withUsage)
	for _, dc := range p.cubeDays() {
		for k := range dc.cells {
			cl := &dc.cells[k]
			if p.comboAllowed != nil && p.comboAllowed[cl.combo] == 0 {
				continue
			}
			var slot uint32
			switch {
			case g.dict != nil:
				slot = g.slotOf[cl.combo]
			case g.by == analytics.GroupDay:
				slot = uint32(dc.day - g.firstDay) // #nosec G115 -- a slot: the plan's days start at firstDay
			}
			a.n[slot] += cl.n
			if !withUsage {
				continue
			}
			a.input[slot] += cl.input
			a.output[slot] += cl.output
			a.cost[slot] += cl.cost
			h, none := a.histOf(slot), cl.n
			for _, e := range cl.lat {
				h[e>>16-a.base] += int64(e & 0xFFFF)
				none -= int64(e & 0xFFFF)
			}
			h[0] += none
		}
	}
	return a
}

// usageScan sums the plan's matching rows of its range per group, split
// over the cores when there are many.
func (p plan) usageScan(g grouping, width int, withUsage bool) *usageAcc {
	n := p.hi - p.lo
	parts := max(1, min(runtime.GOMAXPROCS(0), n/parallelMin))
	accs := make([]*usageAcc, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo := p.lo + n*k/parts
		hi := p.lo + n*(k+1)/parts
		a := newUsageAcc(p.cat, g.slots, width, withUsage)
		accs[k] = a
		if k == parts-1 {
			p.usageRange(a, g, lo, hi)
			break
		}
		wg.Go(func() { p.usageRange(a, g, lo, hi) })
	}
	wg.Wait()
	for _, a := range accs[1:] {
		accs[0].merge(a)
		accs[0].nFromHist = accs[0].nFromHist || a.nFromHist
	}
	if a := accs[0]; a.nFromHist {
		for s, h := range a.hist {
			for _, n := range h {
				a.n[s] += n
			}
		}
	}
	return accs[0]
}

// usageRange sums the matching rows of [lo, hi), a block at a time: rows
// of one group (no grouping, or days in time order) as sums over the
// block, others by each row's slot.
func (p plan) usageRange(a *usageAcc, g grouping, lo, hi int) {
	filtered := len(p.filters) > 0 || p.checkTime
	var pass []uint8
	if filtered {
		pass = make([]uint8, blockRows)
	}
	var times []int64
	if p.checkTime {
		times = make([]int64, blockRows)
	}
	byDay := g.by == analytics.GroupDay && !p.checkTime
	var first [1]int64
	slots := make([]uint32, blockRows)
	for from := lo; from < hi; {
		to := min(from+blockRows, hi)
		var ts []int64
		if p.checkTime {
			ts = p.cat.at.decode(times, from, to)
		}
		var day int64
		if byDay {
			// Rows in time order: stop the block at the end of its first
			// row's day, so that the block is one group.
			day = dayOf(p.cat.at.decode(first[:], from, from+1)[0])
			to = min(to, max(p.cat.at.search((day+1)*dayMicros), from+1))
		}
		var bp []uint8
		if filtered {
			bp = pass[:to-from]
			for k := range bp {
				bp[k] = 1
			}
			if p.checkTime {
				filterTimes(bp, ts, p.start, p.end)
			}
			for _, f := range p.filters {
				filterBlock(bp, f.allow, f.col, from)
			}
		}
		switch {
		case g.by == analytics.GroupNone:
			a.addBlock(0, bp, p.cat, from, to)
		case byDay:
			a.addBlock(uint32(day-g.firstDay), bp, p.cat, from, to) // #nosec G115 -- a slot
		default:
			s := slots[:to-from]
			if g.by == analytics.GroupDay {
				for k, t := range ts {
					// Rows outside the range have pass 0; keep their slot valid.
					s[k] = uint32(min(max(dayOf(t)-g.firstDay, 0), int64(g.slots-1))) // #nosec G115 -- a slot
				}
			} else {
				slotsOf(s, g.slotOf, &p.cat.combo, from)
			}
			a.addBlockBy(s, bp, p.cat, from)
		}
		from = to
	}
}

// addBlock adds rows [lo, hi), each times its pass byte (nil: all), to
// one slot.
func (a *usageAcc) addBlock(slot uint32, pass []uint8, c *catIndex, lo, hi int) {
	if pass == nil {
		a.n[slot] += int64(hi - lo)
	} else {
		a.n[slot] += sumPass(pass)
	}
	if !a.withUsage {
		return
	}
	a.input[slot] += c.input.sum(pass, lo, hi)
	a.output[slot] += c.output.sum(pass, lo, hi)
	a.cost[slot] += c.cost.sum(pass, lo, hi)
	h := a.histOf(slot)
	switch c.latency.width {
	case 1:
		countLatency(h, a.base, pass, c.latency.u8[lo:hi])
	case 2:
		countLatency(h, a.base, pass, c.latency.u16[lo:hi])
	default:
		countLatency(h, a.base, pass, c.latency.u32[lo:hi])
	}
}

// addBlockBy adds rows [lo, lo+len(slots)), each times its pass byte
// (nil: all), to their slots.
func (a *usageAcc) addBlockBy(slots []uint32, pass []uint8, c *catIndex, lo int) {
	if a.withUsage && a.useFlat() {
		// Each row is in its slot's histogram: the slots' counts are
		// summed from them at the end (nFromHist).
		a.nFromHist = true
		hi := lo + len(slots)
		switch c.latency.width {
		case 1:
			histFlat(a.flat, a.width, a.base, slots, pass, c.latency.u8[lo:hi])
		case 2:
			histFlat(a.flat, a.width, a.base, slots, pass, c.latency.u16[lo:hi])
		default:
			histFlat(a.flat, a.width, a.base, slots, pass, c.latency.u32[lo:hi])
		}
	} else {
		countSlots(a.n, slots, pass)
		if !a.withUsage {
			return
		}
		if a.lat == nil {
			a.lat = make([]uint32, blockRows)
		}
		a.histAdd(slots, pass, c.latency.decode(a.lat, lo, lo+len(slots)))
	}
	c.input.sumBy(a.input, slots, pass, lo)
	c.output.sumBy(a.output, slots, pass, lo)
	c.cost.sumBy(a.cost, slots, pass, lo)
}

// useFlat makes every slot's histogram part of one array, when they are
// few enough, and reports whether they are.
func (a *usageAcc) useFlat() bool {
	if a.flat == nil && len(a.n)*a.width <= maxFlatHist {
		a.flat = make([]int64, len(a.n)*a.width)
		for s := range a.hist {
			a.hist[s] = a.flat[s*a.width : (s+1)*a.width : (s+1)*a.width]
		}
	}
	return a.flat != nil
}

// histFlat counts each row's latency code less base (0 for none) in its
// slot's part of h (width counters a slot), times its pass byte (nil:
// all).
func histFlat[T codeWidth](h []int64, width int, base uint32, slots []uint32, pass []uint8, lat []T) {
	w := uint32(width) // #nosec G115 -- a few thousand codes
	lat = lat[:len(slots)]
	if pass == nil {
		for k, s := range slots {
			h[s*w+max(uint32(lat[k]), base)-base]++
		}
		return
	}
	pass = pass[:len(slots)]
	for k, s := range slots {
		h[s*w+max(uint32(lat[k]), base)-base] += int64(pass[k])
	}
}

// countLatency counts each row's latency code less base (0 for none) in
// h, times its pass byte (nil: all).
func countLatency[T codeWidth](h []int64, base uint32, pass []uint8, lat []T) {
	if pass == nil {
		for _, c := range lat {
			h[max(uint32(c), base)-base]++
		}
		return
	}
	pass = pass[:len(lat)]
	for k, c := range lat {
		h[max(uint32(c), base)-base] += int64(pass[k])
	}
}

// histAdd counts each row's latency code in its slot's histogram, times
// its pass byte (nil: all).
func (a *usageAcc) histAdd(slots []uint32, pass []uint8, lat []uint32) {
	if a.useFlat() {
		histFlat(a.flat, a.width, a.base, slots, pass, lat)
		return
	}
	for k, s := range slots {
		if pass != nil && pass[k] == 0 {
			continue
		}
		a.histOf(s)[max(lat[k], a.base)-a.base]++
	}
}

// maxFlatHist is the most histogram counters a count by row allocates at
// once, for every slot; beyond, each slot's comes with its first row.
const maxFlatHist = 1 << 18

// usagePostings sums the plan's matching rows among its posting lists,
// a block of positions at a time, each column's values gathered first.
// The rows pass the filter the lists come from, so only the others are
// checked.
func (p plan) usagePostings(a *usageAcc, g grouping) {
	var others []filter
	for _, f := range p.filters {
		if f.col != p.postingsCol {
			others = append(others, f)
		}
	}
	c := p.cat
	pass, slots, codes := make([]uint8, blockRows), make([]uint32, blockRows), make([]uint32, blockRows)
	var t [1]int64
	for _, list := range p.postings {
		for from := 0; from < len(list); {
			// A run of positions: a block, cut at the end of its first
			// row's day when grouping by day (a list is in row order).
			to := min(from+blockRows, len(list))
			var slot uint32
			if g.by == analytics.GroupDay {
				r := int(list[from])
				day := dayOf(c.at.decode(t[:], r, r+1)[0])
				end := c.at.search((day + 1) * dayMicros)
				to = from + firstAtLeast(list[from:to], int32(end)) // #nosec G115 -- a row position
				slot = uint32(day - g.firstDay)                     // #nosec G115 -- a slot
			}
			pos := list[from:to]
			from = to
			var bp []uint8 // nil: every position passes
			if len(others) > 0 {
				bp = pass[:len(pos)]
				for k := range bp {
					bp[k] = 1
				}
				for _, f := range others {
					for k, code := range f.col.gather(codes, pos) {
						bp[k] &= f.allow[code]
					}
				}
			}
			if g.dict != nil {
				s := slots[:len(pos)]
				for k, combo := range c.combo.gather(codes, pos) {
					s[k] = g.slotOf[combo]
				}
				p.usageAtBy(a, s, bp, pos, codes)
				continue
			}
			if bp == nil {
				a.n[slot] += int64(len(pos))
			} else {
				a.n[slot] += sumPass(bp)
			}
			if !a.withUsage {
				continue
			}
			a.input[slot] += c.input.sumAt(bp, pos)
			a.output[slot] += c.output.sumAt(bp, pos)
			a.cost[slot] += c.cost.sumAt(bp, pos)
			countLatency(a.histOf(slot), a.base, bp, c.latency.gather(codes, pos))
		}
	}
}

// countSlots adds each row, times its pass byte (nil: all), to its
// slot's count in n.
func countSlots(n []int64, slots []uint32, pass []uint8) {
	if pass == nil {
		for _, s := range slots {
			n[s]++
		}
		return
	}
	for k, s := range slots {
		n[s] += int64(pass[k])
	}
}

// usageAtBy adds the rows at the positions to their slots, each times its
// pass byte (nil: all); codes is a buffer of blockRows.
func (p plan) usageAtBy(a *usageAcc, slots []uint32, pass []uint8, pos []int32, codes []uint32) {
	c := p.cat
	countSlots(a.n, slots, pass)
	if !a.withUsage {
		return
	}
	for _, col := range [...]struct {
		col  *intColumn
		sums []int64
	}{{&c.input, a.input}, {&c.output, a.output}, {&c.cost, a.cost}} {
		col.col.sumAtBy(col.sums, slots, pass, pos)
	}
	a.histAdd(slots, pass, c.latency.gather(codes, pos))
}

// sumAt returns the sum of the values at the positions, each times its
// pass byte (nil: all).
func (c *intColumn) sumAt(pass []uint8, pos []int32) int64 {
	switch c.width {
	case 0:
		return 0
	case 1:
		return sumAtVals(c.i8, pass, pos)
	case 2:
		return sumAtVals(c.i16, pass, pos)
	case 4:
		return sumAtVals(c.i32, pass, pos)
	}
	return sumAtVals(c.i64, pass, pos)
}

func sumAtVals[T intWidth](vals []T, pass []uint8, pos []int32) int64 {
	var s0, s1 int64 // two sums, so that the additions do not wait on each other
	n := len(pos) &^ 1
	if pass == nil {
		for k := 0; k < n; k += 2 {
			s0, s1 = s0+int64(vals[pos[k]]), s1+int64(vals[pos[k+1]])
		}
		if n < len(pos) {
			s0 += int64(vals[pos[n]])
		}
		return s0 + s1
	}
	pass = pass[:len(pos)]
	for k, r := range pos {
		s0 += int64(vals[r]) * int64(pass[k])
	}
	return s0
}

// sumAtBy adds the value at each position, times its pass byte (nil:
// all), to its slot's sum.
func (c *intColumn) sumAtBy(sums []int64, slots []uint32, pass []uint8, pos []int32) {
	switch c.width {
	case 0:
	case 1:
		sumAtValsBy(sums, slots, c.i8, pass, pos)
	case 2:
		sumAtValsBy(sums, slots, c.i16, pass, pos)
	case 4:
		sumAtValsBy(sums, slots, c.i32, pass, pos)
	default:
		sumAtValsBy(sums, slots, c.i64, pass, pos)
	}
}

func sumAtValsBy[T intWidth](sums []int64, slots []uint32, vals []T, pass []uint8, pos []int32) {
	slots = slots[:len(pos)]
	if pass == nil {
		for k, r := range pos {
			sums[slots[k]] += int64(vals[r])
		}
		return
	}
	pass = pass[:len(pos)]
	for k, r := range pos {
		sums[slots[k]] += int64(vals[r]) * int64(pass[k])
	}
}

// gather returns the codes of the rows at the positions, into out.
func (c *codeColumn) gather(out []uint32, pos []int32) []uint32 {
	switch c.width {
	case 1:
		return gatherAt(out, c.u8, pos)
	case 2:
		return gatherAt(out, c.u16, pos)
	}
	return gatherAt(out, c.u32, pos)
}

func gatherAt[T codeWidth](out []uint32, vals []T, pos []int32) []uint32 {
	out = out[:len(pos)]
	for k, r := range pos {
		out[k] = uint32(vals[r])
	}
	return out
}

// slotsOf sets the slot of each row from lo by its code in col.
func slotsOf(slots, slotOf []uint32, col *codeColumn, lo int) {
	hi := lo + len(slots)
	switch col.width {
	case 1:
		mapCodes(slots, slotOf, col.u8[lo:hi])
	case 2:
		mapCodes(slots, slotOf, col.u16[lo:hi])
	default:
		mapCodes(slots, slotOf, col.u32[lo:hi])
	}
}

func mapCodes[T codeWidth](slots, slotOf []uint32, codes []T) {
	slots = slots[:len(codes)]
	for k, c := range codes {
		slots[k] = slotOf[c]
	}
}
