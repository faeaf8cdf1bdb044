package colindex

import (
	"bytes"
	"slices"
	"sort"

	"github.com/catsrv/catsrv/core/analytics"
)

// catIndex holds one CAT's api interactions as columns: the time and a
// dictionary code per dimension, indexed by analytics.Dimension.
type catIndex struct {
	at    []int64
	codes [dimensions][]uint32
	dicts [dimensions]dictionary
	// totals counts every row per code: a range covering most of the
	// CAT is counted as the totals minus the rows outside it.
	totals [dimensions][]int64
	cube   cube
	// postings lists, per question and answer code, its rows' positions
	// in time order (see postings.go); indexed like postingDims.
	postings [len(postingDims)][][]int32
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
	c := &catIndex{sorted: true}
	for d := range c.dicts {
		c.dicts[d] = dictionary{byText: map[string][]uint32{}, byKey: map[string][]uint32{}}
	}
	return c
}

// lateBudget is how many rows, as a multiple of the CAT's size, late
// inserts may move per refresh before the remaining late rows are
// appended and the CAT sorted once: an insert moves its suffix, a sort
// moves every row about log2(rows) times.
const lateBudget = 4

// add puts the row at its place in time order: a late row is inserted,
// moving the later rows by one, until the refresh's budget is spent.
func (c *catIndex) add(r Row) {
	n := len(c.at)
	at := n
	if n > 0 && r.Micros < c.at[n-1] {
		// Insert after the rows of equal time, as the stable sort would.
		at = sort.Search(n, func(k int) bool { return c.at[k] > r.Micros })
		if !c.sorted || c.shifted+n-at > lateBudget*n {
			c.sorted = false
			at = n
		} else {
			c.shifted += n - at
		}
	}
	c.at = slices.Insert(c.at, at, r.Micros)
	var codes [dimensions]uint32
	codes[analytics.Topic] = c.push(analytics.Topic, r.Topic, r.Topic, at)
	codes[analytics.Model] = c.push(analytics.Model, r.Model, r.Model, at)
	codes[analytics.Persona] = c.push(analytics.Persona, r.Persona, r.Persona, at)
	codes[analytics.Question] = c.push(analytics.Question, r.QuestionID, r.Question, at)
	codes[analytics.Answer] = c.push(analytics.Answer, r.AnswerID, r.Answer, at)
	for k, d := range postingDims {
		if at < n {
			c.shiftPostings(k, d, at)
		}
		c.insertPosting(k, codes[d], at)
	}
	c.cube.add(r.Micros, [3]uint32{codes[analytics.Topic], codes[analytics.Model], codes[analytics.Persona]})
}

// push codes the value and inserts the code at row position at.
func (c *catIndex) push(d analytics.Dimension, key, text []byte, at int) uint32 {
	code := c.dicts[d].code(key, text)
	c.codes[d] = slices.Insert(c.codes[d], at, code)
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
	perm := make([]int32, len(c.at))
	for k := range perm {
		perm[k] = int32(k) // #nosec G115 -- a CAT holds fewer than 2^31 rows
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		switch {
		case c.at[a] < c.at[b]:
			return -1
		case c.at[a] > c.at[b]:
			return 1
		}
		return 0
	})
	at := make([]int64, len(perm))
	for k, p := range perm {
		at[k] = c.at[p]
	}
	c.at = at
	for d := range c.codes {
		col := make([]uint32, len(perm))
		for k, p := range perm {
			col[k] = c.codes[d][p]
		}
		c.codes[d] = col
	}
	c.rebuildPostings()
	c.sorted = true
	c.shifted = 0
}

// dictionary numbers the distinct (key, text) pairs of one dimension
// within a CAT. For topic, model and persona the key is the text.
type dictionary struct {
	keys, texts []string
	byText      map[string][]uint32 // text → codes, to find a pair
	byKey       map[string][]uint32 // key → codes, to resolve a filter
	// byRank lists the first ranked codes in (text, key) order; rank is
	// the inverse (see updateRanks).
	byRank []uint32
	rank   []uint32
	ranked int
}

// code returns the pair's code, adding the pair if it is new.
func (d *dictionary) code(key, text []byte) uint32 {
	for _, c := range d.byText[string(text)] {
		if d.keys[c] == string(key) {
			return c
		}
	}
	c := uint32(len(d.keys)) // #nosec G115 -- fewer than 2^32 distinct values
	k := string(key)
	t := k
	if !bytes.Equal(key, text) {
		t = string(text)
	}
	d.keys = append(d.keys, k)
	d.texts = append(d.texts, t)
	d.byText[t] = append(d.byText[t], c)
	d.byKey[k] = append(d.byKey[k], c)
	return c
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
