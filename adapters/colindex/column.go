package colindex

import (
	"bytes"
	"slices"

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
	// sorted is false while rows older than the newest are appended last;
	// queries then check each row's time instead of slicing.
	sorted bool
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

func (c *catIndex) add(r Row) {
	if n := len(c.at); n > 0 && r.Micros < c.at[n-1] {
		c.sorted = false
	}
	c.at = append(c.at, r.Micros)
	c.push(analytics.Topic, r.Topic, r.Topic)
	c.push(analytics.Model, r.Model, r.Model)
	c.push(analytics.Persona, r.Persona, r.Persona)
	c.push(analytics.Question, r.QuestionID, r.Question)
	c.push(analytics.Answer, r.AnswerID, r.Answer)
	n := len(c.at) - 1
	for k, d := range postingDims {
		c.addPosting(k, c.codes[d][n], n)
	}
	c.cube.add(r.Micros, [3]uint32{c.codes[analytics.Topic][n], c.codes[analytics.Model][n], c.codes[analytics.Persona][n]})
}

func (c *catIndex) push(d analytics.Dimension, key, text []byte) {
	code := c.dicts[d].code(key, text)
	c.codes[d] = append(c.codes[d], code)
	if int(code) == len(c.totals[d]) {
		c.totals[d] = append(c.totals[d], 0)
	}
	c.totals[d][code]++
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
