package colindex

import (
	"cmp"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
)

// catIndex holds one CAT's api interactions as columns: the time, the
// code of the row's (topic, model, persona) combination, and the codes of
// its question and answer. A CAT has a few hundred combinations, so one
// narrow column stands for three dimensions and a filter on any of them
// is one lookup per row.
type catIndex struct {
	at timeColumn
	// combo, question and answer are the code columns; combos lists each
	// combination's topic, model and persona codes (in cubeDims order).
	combo, question, answer codeColumn
	combos                  [][3]uint32
	comboOf                 map[[3]uint32]uint32
	dicts                   [dimensions]dictionary
	// totals counts every row per code: a range covering most of the
	// CAT is counted as the totals minus the rows outside it.
	totals [dimensions][]int64
	cube   cube
	// postings lists, per question and answer code, its rows' positions
	// in time order (see postings.go); indexed like postingDims.
	postings [len(postingDims)]postingLists
	// seen marks the codes shiftPostings has shifted; all false between
	// calls, kept to spare an allocation per late row.
	seen [len(postingDims)][]bool
	// sorted is false while rows older than the newest are appended last;
	// queries then check each row's time instead of slicing.
	sorted bool
	// shifted counts the rows moved by late inserts since the last
	// refresh: past lateBudget, late rows are appended and sorted once.
	shifted int
}

// dimensions is how many analytics.Dimension values there are.
const dimensions = 5

func newCatIndex() *catIndex {
	c := &catIndex{sorted: true, comboOf: map[[3]uint32]uint32{},
		combo: newCodeColumn(), question: newCodeColumn(), answer: newCodeColumn()}
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

// add puts the row at its place in time order: a late row is inserted,
// moving the later rows by one, until the refresh's budget is spent.
func (c *catIndex) add(r Row) {
	n := c.at.len()
	at := n
	if n > 0 && r.Micros < c.at.last() {
		// Insert after the rows of equal time, as the stable sort would.
		if c.sorted {
			at = c.at.search(r.Micros + 1)
		}
		if !c.sorted || c.shifted+n-at > lateBudget*n {
			c.sorted = false
			at = n
		} else {
			c.shifted += n - at
		}
	}
	c.at.insert(at, r.Micros)
	var codes [dimensions]uint32
	codes[analytics.Topic] = c.code(analytics.Topic, r.Topic, r.Topic)
	codes[analytics.Model] = c.code(analytics.Model, r.Model, r.Model)
	codes[analytics.Persona] = c.code(analytics.Persona, r.Persona, r.Persona)
	codes[analytics.Question] = c.code(analytics.Question, r.QuestionID, r.Question)
	codes[analytics.Answer] = c.code(analytics.Answer, r.AnswerID, r.Answer)
	combo := [3]uint32{codes[analytics.Topic], codes[analytics.Model], codes[analytics.Persona]}
	comboCode, ok := c.comboOf[combo]
	if !ok {
		comboCode = uint32(len(c.combos)) // #nosec G115 -- fewer than 2^32 combinations
		c.comboOf[combo] = comboCode
		c.combos = append(c.combos, combo)
	}
	c.combo.insert(at, comboCode)
	c.question.insert(at, codes[analytics.Question])
	c.answer.insert(at, codes[analytics.Answer])
	for k, d := range postingDims {
		if at < n {
			c.shiftPostings(k, d, at)
		}
		c.postings[k].insert(codes[d], at)
	}
	c.cube.add(r.Micros, comboCode)
}

// code codes the value and counts it in the totals.
func (c *catIndex) code(d analytics.Dimension, key, text []byte) uint32 {
	code := c.dicts[d].code(key, text)
	if int(code) == len(c.totals[d]) {
		c.totals[d] = append(c.totals[d], 0)
	}
	c.totals[d][code]++
	return code
}

// sortByTime orders the rows by time, keeping the order of equal times.
func (c *catIndex) sortByTime() {
	if c.sorted {
		return
	}
	times := c.at.all()
	perm := make([]int32, len(times))
	for k := range perm {
		perm[k] = int32(k) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(times[a], times[b]) })
	c.at.set(permuted(times, perm))
	for _, col := range []*codeColumn{&c.combo, &c.question, &c.answer} {
		col.permute(perm)
	}
	c.rebuildPostings()
	c.sorted = true
	c.shifted = 0
}

// trim drops the spare capacity that growing the columns left behind.
func (c *catIndex) trim() {
	c.at.trim()
	for _, col := range []*codeColumn{&c.combo, &c.question, &c.answer} {
		col.trim()
	}
	for d := range c.dicts {
		c.dicts[d].trim()
	}
	for k := range c.postings {
		c.postings[k].trim()
	}
}

// staging holds rows read from the source until they are applied, copied
// out of the source's buffers.
type staging struct {
	buf  []byte
	rows []stagedRow
}

type stagedRow struct {
	id, micros int64
	start      int
	ends       [8]int // end offsets in buf of the row's fields, in Row order
}

func (s *staging) reset()   { s.buf, s.rows = s.buf[:0], s.rows[:0] }
func (s *staging) len() int { return len(s.rows) }

func (s *staging) add(r *Row) {
	sr := stagedRow{id: r.ID, micros: r.Micros, start: len(s.buf)}
	for k, f := range [8][]byte{r.Cat, r.Topic, r.Model, r.Persona, r.QuestionID, r.Question, r.AnswerID, r.Answer} {
		s.buf = append(s.buf, f...)
		sr.ends[k] = len(s.buf)
	}
	s.rows = append(s.rows, sr)
}

func (s *staging) row(k int) Row {
	sr := s.rows[k]
	var f [8][]byte
	from := sr.start
	for i, end := range sr.ends {
		f[i] = s.buf[from:end:end]
		from = end
	}
	return Row{ID: sr.id, Micros: sr.micros, Cat: f[0], Topic: f[1], Model: f[2], Persona: f[3],
		QuestionID: f[4], Question: f[5], AnswerID: f[6], Answer: f[7]}
}
