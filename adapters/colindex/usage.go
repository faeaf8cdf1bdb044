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
	groups := countGroups(c, sel, q.GroupBy, true)
	var total analytics.UsageSum
	for _, g := range groups {
		total.Interactions += g.n
		total.InputTokens += g.input
		total.OutputTokens += g.output
		total.CostNanos += g.cost
		for code, n := range g.hist {
			if code > 0 {
				total.Latency.AddCount(code-1, n)
			}
		}
	}
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
			if k, ok := byKey[g.key]; ok { // a rated row is one of the CAT's
				groups[k].rated[r] += g.n
			}
		}
	}
	out := analytics.UsageCounts{Total: total.Stats()}
	if q.GroupBy == analytics.GroupNone {
		return out, nil
	}
	out.Groups = make([]analytics.UsageGroup, len(groups))
	for k, g := range groups {
		s := analytics.UsageSum{Interactions: g.n, InputTokens: g.input, OutputTokens: g.output,
			CostNanos: g.cost, Up: g.rated[0], Down: g.rated[1]}
		for code, n := range g.hist {
			if code > 0 {
				s.Latency.AddCount(code-1, n)
			}
		}
		out.Groups[k] = analytics.UsageGroup{Key: g.key, UsageStats: s.Stats()}
	}
	return out, nil
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
		width = int(c.latMax) + 1
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
		days := p.cat.cube.days
		if len(days) == 0 {
			return g
		}
		first, last := days[0].day, days[len(days)-1].day
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
// latency code (nil until the slot has a row).
type usageAcc struct {
	n, input, output, cost []int64
	hist                   [][]int64
	width                  int
	withUsage              bool
	lat                    []uint32 // a block's latency codes
}

func newUsageAcc(slots, width int, withUsage bool) *usageAcc {
	a := &usageAcc{n: make([]int64, slots), width: width, withUsage: withUsage}
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

// runUsage sums the plan's matching rows per group, split over the cores
// when there are many.
func (p plan) runUsage(g grouping, width int, withUsage bool) *usageAcc {
	if p.postings != nil {
		a := newUsageAcc(g.slots, width, withUsage)
		p.usagePostings(a, g)
		return a
	}
	n := p.hi - p.lo
	parts := max(1, min(runtime.GOMAXPROCS(0), n/parallelMin))
	accs := make([]*usageAcc, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo := p.lo + n*k/parts
		hi := p.lo + n*(k+1)/parts
		a := newUsageAcc(g.slots, width, withUsage)
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
	if p.checkTime || g.by == analytics.GroupDay {
		times = make([]int64, blockRows)
	}
	slots := make([]uint32, blockRows)
	codes := make([]uint32, blockRows)
	for from := lo; from < hi; {
		to := min(from+blockRows, hi)
		var ts []int64
		if times != nil && (p.checkTime || g.by == analytics.GroupDay) {
			ts = p.cat.at.decode(times, from, to)
		}
		if g.by == analytics.GroupDay && !p.checkTime {
			// Rows in time order: stop the block at the end of its first
			// row's day, so that the block is one group.
			day := dayOf(ts[0])
			if ts[len(ts)-1] >= (day+1)*dayMicros {
				to = from + p.cat.at.search((day+1)*dayMicros) - from
				to = min(max(to, from+1), hi)
				ts = ts[:to-from]
			}
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
		case g.by == analytics.GroupDay && !p.checkTime:
			a.addBlock(uint32(dayOf(ts[0])-g.firstDay), bp, p.cat, from, to) // #nosec G115 -- a slot
		default:
			s := slots[:to-from]
			if g.by == analytics.GroupDay {
				for k, t := range ts {
					// Rows outside the range have pass 0; keep their slot valid.
					s[k] = uint32(min(max(dayOf(t)-g.firstDay, 0), int64(g.slots-1))) // #nosec G115 -- a slot
				}
			} else {
				for k, combo := range p.cat.combo.decode(codes, from, to) {
					s[k] = g.slotOf[combo]
				}
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
	countBlock(a.histOf(slot), pass, &c.latency, lo, hi)
}

// addBlockBy adds rows [lo, lo+len(slots)), each times its pass byte
// (nil: all), to their slots.
func (a *usageAcc) addBlockBy(slots []uint32, pass []uint8, c *catIndex, lo int) {
	if pass == nil {
		for _, s := range slots {
			a.n[s]++
		}
	} else {
		for k, s := range slots {
			a.n[s] += int64(pass[k])
		}
	}
	if !a.withUsage {
		return
	}
	c.input.sumBy(a.input, slots, pass, lo)
	c.output.sumBy(a.output, slots, pass, lo)
	c.cost.sumBy(a.cost, slots, pass, lo)
	if a.lat == nil {
		a.lat = make([]uint32, blockRows)
	}
	lat := c.latency.decode(a.lat, lo, lo+len(slots))
	for k, s := range slots {
		if pass != nil && pass[k] == 0 {
			continue
		}
		a.histOf(s)[lat[k]]++
	}
}

// usagePostings sums the plan's matching rows among its posting lists.
// The rows pass the filter the lists come from, so only the others are
// checked.
func (p plan) usagePostings(a *usageAcc, g grouping) {
	var others []filter
	for _, f := range p.filters {
		if f.col != p.postingsCol {
			others = append(others, f)
		}
	}
	var t [1]int64
	c := p.cat
	for _, list := range p.postings {
		for _, r := range list {
			k := int(r)
			pass := uint8(1)
			for _, f := range others {
				pass &= f.allow[f.col.get(k)]
			}
			if pass == 0 {
				continue
			}
			var s uint32
			switch {
			case g.dict != nil:
				s = g.slotOf[c.combo.get(k)]
			case g.by == analytics.GroupDay:
				s = uint32(dayOf(c.at.decode(t[:], k, k+1)[0]) - g.firstDay) // #nosec G115 -- a slot
			}
			a.n[s]++
			if !a.withUsage {
				continue
			}
			a.input[s] += c.input.get(k)
			a.output[s] += c.output.get(k)
			a.cost[s] += c.cost.get(k)
			a.histOf(s)[c.latency.get(k)]++
		}
	}
}
