package colindex

import (
	"runtime"
	"sync"

	"github.com/catsrv/catsrv/core/analytics"
)

// An answer is a total under every filter and each dimension's list under
// every filter but its own. When its lists would each read the same rows
// again, one pass counts them all: a row that fails no filter counts in
// the total and every list, a row that fails exactly one counts only in
// that filter's dimension's list, the others nowhere (the rule
// analytics.CountAnswer states over interactions).
//
// Per row the pass adds three counts, without a branch (the question
// counts only for the rows that count there, see passRows): per combination
// (rows passing the question and answer filters, which gives the total and,
// knowing which of topic, model and persona each combination fails, their
// lists), per question (rows passing the combination and answer filters)
// and per answer (rows passing the combination and question filters).

// onePass is the lists a pass counts for one answer.
type onePass struct {
	p    plan
	want [dimensions]bool
	// forTotal is set when the answer takes its total from the pass.
	forTotal bool

	total int64
	lists [dimensions][]int64 // per code of the dimension, for want
}

// passMinGain is how many times its own rows the lists a pass replaces
// must read for the pass to be worth it: the pass adds three counts a
// row where a list adds one.
const passMinGain = 1.5

// lazyMinLists is how many lists a pass that does not count the total
// must replace: measured at 10M rows, two lists counted apart (such as
// the question and answer lists under a topic, model or persona filter,
// the others being from the cube) take less time than their pass.
const lazyMinLists = 3

// newPass returns the pass for a plan's wanted lists, or nil when one
// would not read fewer rows than the counts it replaces (totalReads: the
// rows the total reads itself, counted in the comparison only when the
// pass counts the total).
func newPass(p plan, wanted [dimensions]bool, totalReads int) *onePass {
	if p.checkTime {
		return nil
	}
	passRows := p.hi - p.lo
	if p.postings != nil {
		passRows = p.postingRows()
	}
	rows := p.cat.at.len()
	pass := &onePass{p: p}
	reads, lists := totalReads, 0
	for d := range analytics.Dimension(dimensions) {
		if !wanted[d] {
			continue
		}
		others := false
		for o := range analytics.Dimension(dimensions) {
			others = others || (o != d && p.allowBy[o] != nil)
		}
		col, _ := p.cat.column(d)
		switch {
		case p.postings != nil && col == p.postingsCol:
			// The pass reads the filter's rows alone.
			continue
		case !others && p.lo == 0 && p.hi == rows:
			continue // the running totals
		case col == &p.cat.combo && p.usesCube():
			continue
		case !others:
			reads += min(passRows, rows-passRows)
		default:
			reads += passRows
		}
		pass.want[d] = true
		lists++
	}
	if float64(reads) < passMinGain*float64(passRows) || reads == totalReads {
		return nil
	}
	if totalReads == 0 && lists < lazyMinLists {
		return nil
	}
	return pass
}

// run counts the pass; the caller holds the index's read lock.
func (s *onePass) run() {
	s.total, s.lists = s.p.countPass(s.want, s.forTotal)
}

// passFilters are a pass's filters as bytes per code, 1 for the codes
// that pass (every code of an unfiltered dimension); none is set when no
// dimension is filtered, and the pass then counts every row.
type passFilters struct {
	combo, question, answer []uint8
	none                    bool
	comboOnly               bool // only topic, model or persona are filtered
	questions               bool // the question list is wanted
	combos                  bool // the total or a topic, model or persona list is
}

// tally is what a pass, or one part of it, counts.
type tally struct {
	perCombo, question, answer []int64
}

// newTally returns the counters of a pass, the question counts (as
// many as the CAT has questions: megabytes) only when they are wanted.
func (p plan) newTally(questions bool) tally {
	t := tally{
		perCombo: make([]int64, len(p.cat.combos)),
		answer:   make([]int64, p.cat.dicts[analytics.Answer].len()),
	}
	if questions {
		t.question = make([]int64, p.cat.dicts[analytics.Question].len())
	}
	return t
}

// countPass counts the plan's total and the lists of the wanted
// dimensions in one pass over its rows.
func (p plan) countPass(want [dimensions]bool, forTotal bool) (int64, [dimensions][]int64) {
	f := passFilters{none: len(p.filters) == 0, questions: want[analytics.Question],
		combos:    forTotal || want[analytics.Topic] || want[analytics.Model] || want[analytics.Persona],
		comboOnly: p.allowBy[analytics.Question] == nil && p.allowBy[analytics.Answer] == nil}
	if !f.none {
		f.combo = orAll(p.comboAllowed, len(p.cat.combos))
		f.question = orAll(p.allowBy[analytics.Question], p.cat.dicts[analytics.Question].len())
		f.answer = orAll(p.allowBy[analytics.Answer], p.cat.dicts[analytics.Answer].len())
	}
	var t tally
	if p.postings != nil {
		t = p.positionParts(f, max(1, min(runtime.GOMAXPROCS(0), p.postingRows()/parallelMin)))
	} else {
		t = p.passParts(f)
	}
	return p.foldPass(t, want)
}

// passParts counts the plan's range, split over the cores when it is long.
func (p plan) passParts(f passFilters) tally {
	n := p.hi - p.lo
	parts := max(1, min(runtime.GOMAXPROCS(0), n/parallelMin))
	out := make([]tally, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := p.lo+n*k/parts, p.lo+n*(k+1)/parts
		out[k] = p.newTally(f.questions)
		if k == parts-1 {
			out[k].countRange(f, p.cat, lo, hi)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k].countRange(f, p.cat, lo, hi)
		}()
	}
	wg.Wait()
	return merged(out)
}

// postingRows returns how many positions the plan's posting lists hold.
func (p plan) postingRows() int {
	n := 0
	for _, l := range p.postings {
		n += len(l)
	}
	return n
}

// positionParts counts the rows of the plan's posting lists in parts
// (the cores, when the positions are many) counted at once.
func (p plan) positionParts(f passFilters, parts int) tally {
	n := p.postingRows()
	out := make([]tally, parts)
	var wg sync.WaitGroup
	for k := range parts {
		// The part's share of the positions, list by list.
		lo, hi := n*k/parts, n*(k+1)/parts
		var share [][]int32
		at := 0
		for _, l := range p.postings {
			from, to := max(lo-at, 0), min(hi-at, len(l))
			if from < to {
				share = append(share, l[from:to])
			}
			at += len(l)
		}
		out[k] = p.newTally(f.questions)
		count := func() {
			for _, l := range share {
				out[k].countPositions(f, p.cat, p.postingsCol, l)
			}
		}
		if k == parts-1 {
			count()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			count()
		}()
	}
	wg.Wait()
	return merged(out)
}

// merged adds the parts' counts into the first part's.
func merged(out []tally) tally {
	t := out[0]
	for _, more := range out[1:] {
		for _, pair := range [][2][]int64{{t.perCombo, more.perCombo}, {t.question, more.question}, {t.answer, more.answer}} {
			for code, n := range pair[1] {
				pair[0][code] += n
			}
		}
	}
	return t
}

// foldPass turns a pass's tally into the total and the wanted lists.
func (p plan) foldPass(t tally, want [dimensions]bool) (int64, [dimensions][]int64) {
	var lists [dimensions][]int64
	// fails[combo] has bit k set when the combination fails the filter of
	// cubeDims[k].
	fails := make([]uint8, len(p.cat.combos))
	for k, d := range cubeDims {
		if allow := p.allowBy[d]; allow != nil {
			for combo, codes := range p.cat.combos {
				fails[combo] |= (1 - allow[codes[k]]) << k
			}
		}
	}
	var total int64
	for combo, n := range t.perCombo {
		if fails[combo] == 0 {
			total += n
		}
	}
	for k, d := range cubeDims {
		if !want[d] {
			continue
		}
		counts := make([]int64, p.cat.dicts[d].len())
		for combo, n := range t.perCombo {
			if fails[combo]&^(1<<k) == 0 {
				counts[p.cat.combos[combo][k]] += n
			}
		}
		lists[d] = counts
	}
	if want[analytics.Question] {
		lists[analytics.Question] = t.question
	}
	if want[analytics.Answer] {
		lists[analytics.Answer] = t.answer
	}
	return total, lists
}

// orAll returns allow, or n ones when allow is nil (no filter).
func orAll(allow []uint8, n int) []uint8 {
	if allow != nil {
		return allow
	}
	all := make([]uint8, n)
	for k := range all {
		all[k] = 1
	}
	return all
}
