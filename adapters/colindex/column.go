package colindex

import (
	"cmp"
	"slices"
	"sync"

	"github.com/catsrv/catsrv/core/analytics"
)

// catIndex holds one CAT's api interactions as columns: the time, the
// code of the row's (topic, model, persona) combination, and the codes of
// its question and answer. A CAT has a few hundred combinations, so one
// narrow column stands for three dimensions and a filter on any of them
// is one lookup per row.
type catIndex struct {
	catRows
	combos  [][3]uint32 // each combination's topic, model and persona codes (in cubeDims order)
	comboOf map[[3]uint32]uint32
	dicts   [dimensions]dictionary
	// totals counts every row per code: a range covering most of the
	// CAT is counted as the totals minus the rows outside it.
	totals [dimensions][]int64
	// heavy classes the question and answer codes by total (indexed
	// like postingDims): the codes a list cut to a limit counts first
	// (see heavy.go).
	heavy [len(postingDims)]heavyCodes
	cube  cube
	// byCombo holds the question and answer codes' rows per combination
	// over the whole CAT, built by queries (see combolists.go).
	byCombo comboCache
	// seen marks the codes shiftPostings has shifted; all false between
	// calls, kept to spare an allocation per late row.
	seen [len(postingDims)][]bool
	// shifted counts the rows moved by late inserts since the last
	// refresh: past lateBudget, late rows are appended and sorted once.
	shifted int
	// buildPostings is set while a CAT no reader sees yet receives its
	// rows (a catDraft's fresh CAT): put leaves the posting lists and the
	// classes by total alone, and finishFresh builds them once, each list
	// at its final size.
	buildPostings bool
	// rated holds the CAT's rows rated up and down (indexed by
	// RatingCode-1), each a catIndex of its own: ratings change after
	// their rows come, so they are not a column (see ratings.go). nil
	// in a rated catIndex itself, and until a CAT has a rated row.
	rated [2]*catIndex
	// noCube is set in a rated index: only usage counts read it, and they
	// read rows, not the cube.
	noCube bool
	// firstAt and lastAt are the earliest and latest row times.
	firstAt, lastAt int64
}

// catRows is a CAT's rows: the code columns, the time column and the
// posting lists. sortUnsorted builds the next catRows beside the one
// readers use and swaps it in under the write lock.
type catRows struct {
	at timeColumn
	// combo, question and answer are the code columns: the row's
	// combination (see catIndex.combos), question and answer codes.
	combo, question, answer codeColumn
	// The usage columns: tokens, cost in 1e-9 USD, and the latency's
	// bucket plus one (0 for none); latMin and latMax are the smallest
	// and largest latency codes but 0 (see latCodes).
	input, output, cost intColumn
	latency             codeColumn
	latMin, latMax      uint32
	// postings lists, per question and answer code, its rows' positions
	// in time order (see postings.go); indexed like postingDims.
	postings [len(postingDims)]postingLists
	// sorted is false while rows older than the newest are appended last;
	// queries then check each row's time instead of slicing. The first
	// inOrder rows are in time order then.
	sorted  bool
	inOrder int
}

// latCodes returns where a latency histogram of the rows counts each
// code: code-base for the codes from latMin on (base = latMin-1), 0 for
// none, in width counters; the buckets below the CAT's fastest are left
// out.
func (c *catRows) latCodes() (base uint32, width int) {
	if c.latMin > 0 {
		base = c.latMin - 1
	}
	return base, int(c.latMax-base) + 1
}

// dimensions is how many analytics.Dimension values there are.
const dimensions = 5

func newCatIndex() *catIndex {
	c := &catIndex{comboOf: map[[3]uint32]uint32{}, catRows: catRows{sorted: true,
		combo: newCodeColumn(), question: newCodeColumn(), answer: newCodeColumn(), latency: newCodeColumn()}}
	for d := range c.dicts {
		c.dicts[d] = newDictionary()
	}
	return c
}

// column returns the column holding dimension d's codes and how many
// codes it has: for topic, model and persona, the combination column,
// whose counts fold turns into the dimension's.
func (c *catIndex) column(d analytics.Dimension) (*codeColumn, int) {
	switch d {
	case analytics.Question:
		return &c.question, c.dicts[d].len()
	case analytics.Answer:
		return &c.answer, c.dicts[d].len()
	}
	return &c.combo, len(c.combos)
}

// fold turns counts per code of column(d) into counts per code of d.
func (c *catIndex) fold(d analytics.Dimension, counts []int64) []int64 {
	k := slices.Index(cubeDims[:], d)
	if k < 0 {
		return counts
	}
	out := make([]int64, c.dicts[d].len())
	for combo, n := range counts {
		out[c.combos[combo][k]] += n
	}
	return out
}

// lateBudget is how many rows, as a multiple of the CAT's size, late
// inserts may move per refresh before the remaining late rows are
// appended and the CAT sorted once: an insert moves its suffix, a sort
// moves every row about log2(rows) times.
const lateBudget = 4

// code codes the row's values in the CAT's dictionaries, adding the new
// ones.
func (c *catIndex) code(r *analytics.FeedRow) [dimensions]uint32 {
	var codes [dimensions]uint32
	codes[analytics.Topic] = c.dicts[analytics.Topic].code(r.Topic, r.Topic)
	codes[analytics.Model] = c.dicts[analytics.Model].code(r.Model, r.Model)
	codes[analytics.Persona] = c.dicts[analytics.Persona].code(r.Persona, r.Persona)
	codes[analytics.Question] = c.dicts[analytics.Question].code(r.QuestionID, r.Question)
	codes[analytics.Answer] = c.dicts[analytics.Answer].code(r.AnswerID, r.Answer)
	return codes
}

// addCoded adds a row whose values are coded in the CAT's dictionaries.
func (c *catIndex) addCoded(micros int64, codes *[dimensions]uint32, use rowUsage) {
	combo := [3]uint32{codes[analytics.Topic], codes[analytics.Model], codes[analytics.Persona]}
	comboCode, ok := c.comboOf[combo]
	if !ok {
		comboCode = c.newCombo(combo)
	}
	c.put(codedRow{micros: micros, combo: comboCode, question: codes[analytics.Question], answer: codes[analytics.Answer], use: use})
}

// newCombo adds a (topic, model, persona) combination and returns its code.
func (c *catIndex) newCombo(combo [3]uint32) uint32 {
	code := uint32(len(c.combos)) // #nosec G115 -- fewer than 2^32 combinations
	c.comboOf[combo] = code
	c.combos = append(c.combos, combo)
	return code
}

// codedRow is a row whose values are coded in its CAT's dictionaries: the
// time, the combination's code, the question and answer codes and the
// usage.
type codedRow struct {
	micros                  int64
	combo, question, answer uint32
	use                     rowUsage
}

// rowUsage is a row's usage: tokens, cost and latency code (bucket plus
// one, 0 for none).
type rowUsage struct {
	input, output, cost int64
	latency             uint32
}

// usageOf returns a feed row's usage.
func usageOf(r *analytics.FeedRow) rowUsage {
	return rowUsage{input: r.InputTokens, output: r.OutputTokens, cost: r.CostNanos,
		latency: uint32(max(r.LatencyBucket, 0))} // #nosec G115 -- not negative
}

// put puts the coded row at its place in time order: a late row is
// inserted, moving the later rows by one, until the refresh's budget is
// spent. Its codes must be in the dictionaries and combinations.
func (c *catIndex) put(r codedRow) {
	n := c.at.len()
	if n == 0 {
		c.firstAt, c.lastAt = r.micros, r.micros
	}
	c.firstAt, c.lastAt = min(c.firstAt, r.micros), max(c.lastAt, r.micros)
	at := n
	if n > 0 && r.micros < c.at.last() {
		// Insert after the rows of equal time, as the stable sort would.
		if c.sorted {
			at = c.at.search(r.micros + 1)
		}
		if !c.sorted || c.shifted+n-at > lateBudget*n {
			if c.sorted {
				c.sorted, c.inOrder = false, n
			}
			at = n
		} else {
			c.shifted += n - at
		}
	}
	c.at.insert(at, r.micros)
	combo := c.combos[r.combo]
	var codes [dimensions]uint32
	codes[analytics.Topic], codes[analytics.Model], codes[analytics.Persona] = combo[0], combo[1], combo[2]
	codes[analytics.Question], codes[analytics.Answer] = r.question, r.answer
	for d, code := range codes {
		if int(code) == len(c.totals[d]) {
			c.totals[d] = append(c.totals[d], 0)
		}
		c.totals[d][code]++
	}
	c.combo.insert(at, r.combo)
	c.question.insert(at, r.question)
	c.answer.insert(at, r.answer)
	c.input.insert(at, r.use.input)
	c.output.insert(at, r.use.output)
	c.cost.insert(at, r.use.cost)
	c.latency.insert(at, r.use.latency)
	c.latMax = max(c.latMax, r.use.latency)
	if r.use.latency != 0 && (c.latMin == 0 || r.use.latency < c.latMin) {
		c.latMin = r.use.latency
	}
	if !c.noCube {
		c.cube.add(r.micros, r.combo, r.use)
	}
	if c.buildPostings {
		return
	}
	for k, d := range postingDims {
		c.heavy[k].add(codes[d], c.totals[d][codes[d]])
	}
	for k, d := range postingDims {
		if at < n {
			c.shiftPostings(k, d, at)
		}
		c.postings[k].insert(codes[d], at)
	}
}

// reserve makes room for n rows in the columns, so that a CAT built
// from a snapshot of known size is not copied while it grows.
func (c *catIndex) reserve(n int) {
	c.at.low = slices.Grow(c.at.low, max(0, n-len(c.at.low)))
	for _, col := range []*codeColumn{&c.combo, &c.question, &c.answer, &c.latency} {
		col.reserve(n)
	}
	for _, col := range []*intColumn{&c.input, &c.output, &c.cost} {
		col.reserve(n)
	}
}

// finishFresh makes a CAT built aside ready for readers: its
// dictionaries ranked (each in a goroutine of its own), its rows in time
// order and its posting lists built.
func (c *catIndex) finishFresh() {
	var wg sync.WaitGroup
	for d := range c.dicts {
		wg.Go(c.dicts[d].updateRanks)
	}
	sorted := c.sorted
	c.sortByTime(&c.totals) // builds the posting lists when it sorts
	if sorted {
		for k, d := range postingDims {
			c.postings[k].rebuild(c.totals[d], c.postingColumn(k))
		}
	}
	for k, d := range postingDims {
		c.heavy[k] = heavyOf(c.totals[d])
	}
	c.shifted, c.buildPostings = 0, false
	wg.Wait()
}

// sortByTime orders the rows by time, keeping the order of equal times,
// in new storage (readers may be using the old); totals counts the rows
// per code (for the posting lists).
func (r *catRows) sortByTime(totals *[dimensions][]int64) {
	if r.sorted {
		return
	}
	times := r.at.all()
	perm := mergedOrder(times, r.inOrder)
	r.at.set(permuted(times, perm))
	for _, col := range []*codeColumn{&r.combo, &r.question, &r.answer, &r.latency} {
		col.permute(perm)
	}
	for _, col := range []*intColumn{&r.input, &r.output, &r.cost} {
		col.permute(perm)
	}
	for k, d := range postingDims {
		r.postings[k].rebuild(totals[d], r.postingColumn(k))
	}
	r.sorted, r.inOrder = true, 0
}

// postingColumn returns the code column of postingDims[k].
func (r *catRows) postingColumn(k int) *codeColumn {
	if postingDims[k] == analytics.Question {
		return &r.question
	}
	return &r.answer
}

// mergedOrder returns the row order that sorts times stably, the first
// sorted of them in order already: the others sorted, then both merged.
func mergedOrder(times []int64, sorted int) []int32 {
	perm := make([]int32, len(times))
	for k := range perm {
		perm[k] = int32(k) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	}
	byTime := func(a, b int32) int { return cmp.Compare(times[a], times[b]) }
	tail := perm[sorted:]
	slices.SortStableFunc(tail, byTime)
	if sorted == 0 || len(tail) == 0 {
		return perm
	}
	head := perm[:sorted]
	out := make([]int32, 0, len(perm))
	for len(head) > 0 && len(tail) > 0 {
		if byTime(tail[0], head[0]) < 0 {
			out, tail = append(out, tail[0]), tail[1:]
		} else {
			out, head = append(out, head[0]), head[1:]
		}
	}
	return append(append(out, head...), tail...)
}

// trim drops the spare capacity that growing the columns left behind.
func (c *catIndex) trim() {
	c.at.trim()
	for _, col := range []*codeColumn{&c.combo, &c.question, &c.answer, &c.latency} {
		col.trim()
	}
	for _, col := range []*intColumn{&c.input, &c.output, &c.cost} {
		col.trim()
	}
	for _, r := range c.rated {
		if r != nil {
			r.trim()
		}
	}
	for d := range c.dicts {
		c.dicts[d].trim()
	}
	for k := range c.postings {
		c.postings[k].trim()
	}
}
