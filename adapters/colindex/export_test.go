package colindex

import (
	"context"
	"slices"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// RefreshHold is Refresh, also returning how long applying the rows held
// the write lock (for BenchmarkApplyHold).
func (x *Index) RefreshHold(ctx context.Context) (time.Duration, error) {
	x.turn.Lock()
	defer x.turn.Unlock()
	b := batch{cats: map[string]*catDraft{}}
	high, err := x.src.ReadSince(ctx, x.high, func(r *analytics.FeedRow) error {
		b.add(x.cats, r)
		return nil
	})
	if err != nil {
		return 0, err
	}
	b.high = high
	b.prepare()
	start := time.Now()
	x.mu.Lock()
	b.apply(x.cats)
	x.high, x.rows = b.high, x.rows+b.rows
	x.mu.Unlock()
	hold := time.Since(start)
	x.sortUnsorted()
	x.rank()
	return hold, nil
}

// CountWay counts dimension d's list of the selection the named way: the
// plain "scan" of the range's rows, or one of the shortcuts groups
// chooses from ("totals", "cube", "complement", "top", "comboLists", and "postings", a
// scan of a selective question or answer filter's rows only); ok is
// false when that way does not apply to it.
func (x *Index) CountWay(way string, sel analytics.Selection, d analytics.Dimension, limit int) (groups []analytics.Group, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	p, ok := x.plan(sel)
	if !ok {
		return nil, false
	}
	dict := &p.cat.dicts[d]
	col, size := p.cat.column(d)
	rows := col.len()
	unfiltered := len(p.filters) == 0 && !p.checkTime
	switch way {
	case "postings":
		if p.postings == nil {
			return nil, false
		}
		return dict.sortedGroups(p.cat.fold(d, sum(p.run(col, size))), limit), true
	case "scan":
		p.postings = nil
		return dict.sortedGroups(p.cat.fold(d, sum(p.run(col, size))), limit), true
	case "totals":
		if !unfiltered || p.lo != 0 || p.hi != rows {
			return nil, false
		}
		return dict.sortedGroups(p.cat.totals[d], limit), true
	case "cube":
		own := slices.Index(cubeDims[:], d)
		if own < 0 || !p.usesCube() {
			return nil, false
		}
		counts := make([]int64, dict.len())
		p.fromCube(own, counts)
		return dict.sortedGroups(counts, limit), true
	case "complement":
		if !unfiltered {
			return nil, false
		}
		counts := slices.Clone(p.cat.totals[d])
		for _, out := range [2]plan{{cat: p.cat, lo: 0, hi: p.lo}, {cat: p.cat, lo: p.hi, hi: rows}} {
			if out.lo == out.hi {
				continue
			}
			for code, n := range p.cat.fold(d, sum(out.run(col, size))) {
				counts[code] -= n
			}
		}
		return dict.sortedGroups(counts, limit), true
	case "comboLists":
		p.cat.comboLists() // built by the second query that sees the same rows
		counts, ok := p.byComboOnly(d)
		if !ok {
			return nil, false
		}
		return dict.sortedGroups(counts, limit), true
	case "top":
		return p.top(d, limit)
	}
	return nil, false
}

// MarkUnsorted marks every CAT and rated index as holding rows out of
// time order (as between a late insert and the sort), so that queries
// check each row's time; the next refresh sorts them again.
func (x *Index) MarkUnsorted() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range x.allCats() {
		c.sorted, c.inOrder = false, c.at.len()
	}
}

// UsageWay counts the query's usage, without ratings, the named way: the
// "cube"'s cells (ok false when it does not apply) or the plain "scan"
// of the range's rows.
func (x *Index) UsageWay(way string, q analytics.UsageQuery) (out analytics.UsageCounts, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.cats[q.Cat]
	if c == nil {
		return out, false
	}
	p, ok := planOf(c, q.Selection())
	if !ok {
		return out, false
	}
	g := p.grouping(q.GroupBy)
	base, width := c.latCodes()
	var a *usageAcc
	switch {
	case way == "cube" && p.usesCube():
		a = p.usageFromCube(g, width, true)
	case way == "scan":
		a = p.usageScan(g, width, true)
	default:
		return out, false
	}
	for slot, n := range a.n {
		if n == 0 {
			continue
		}
		s := analytics.UsageSum{Interactions: n, InputTokens: a.input[slot], OutputTokens: a.output[slot],
			CostNanos: a.cost[slot], Latency: latencyOf(a.hist[slot], n, base)}
		out.Groups = append(out.Groups, analytics.UsageGroup{Key: g.key(slot), UsageStats: s.Stats()})
	}
	return out, true
}
