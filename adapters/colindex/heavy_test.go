package colindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// addSkewed appends n rows over ten days from start, in time order when
// inOrder is set: questions and answers skewed as real ones are (code k
// about 1/(k+1) as often as code 0), with many equal counts, and one
// question in ten asked once.
func (s *rowSource) addSkewed(r *rand.Rand, n int, start time.Time, inOrder bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	skewed := func(codes int) int { return int(float64(codes)*r.Float64()*r.Float64()*r.Float64()) % codes }
	for k := range n {
		at := start.Add(time.Duration(r.IntN(10*24*3600)) * time.Second)
		if inOrder {
			at = start.Add(time.Duration(k) * time.Second)
		}
		q := fmt.Sprintf("q-%d", skewed(2000))
		if r.IntN(10) == 0 {
			q = fmt.Sprintf("once-%d-%d", len(s.rows), r.Uint64())
		}
		a := fmt.Sprintf("a-%d", skewed(300))
		s.rows = append(s.rows, analytics.FeedRow{
			ID: int64(len(s.rows) + 1), Micros: at.UnixMicro(), Cat: []byte("c"),
			Topic: []byte(fmt.Sprintf("t%d", r.IntN(4))), Model: []byte("m"), Persona: []byte("p"),
			QuestionID: []byte(q), Question: []byte("text of " + q), AnswerID: []byte(a), Answer: []byte("text of " + a),
		})
	}
}

// TestTopOfRange checks the lists cut to a limit over unfiltered ranges,
// found from the codes counted most (plan.top), against the same lists
// counted code by code, after a first build, a refresh applied beside the
// readers' rows and one of late rows, and that the classes
// hold every code of eight rows or more in its own class. It fails if
// the shortcut never answers.
func TestTopOfRange(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	src := &rowSource{}
	src.addSkewed(r, 30000, passDay, false)
	idx := buildFrom(t, src)
	ranges := map[string]analytics.Range{
		"full range":        {},
		"start only":        {Start: passDay.AddDate(0, 0, 4)},
		"end only":          {End: passDay.AddDate(0, 0, 6)},
		"middle":            {Start: passDay.AddDate(0, 0, 3), End: passDay.AddDate(0, 0, 5)},
		"inside a day":      {Start: passDay.Add(50*time.Hour + 7*time.Minute), End: passDay.Add(60 * time.Hour)},
		"an hour":           {Start: passDay.Add(5 * time.Hour), End: passDay.Add(6 * time.Hour)},
		"after the rows":    {Start: passDay.AddDate(0, 1, 0)},
		"most, not the end": {End: passDay.Add(239 * time.Hour)},
	}
	for _, step := range []struct {
		name string
		add  func()
	}{
		{"first build", func() {}},
		{"a large refresh", func() { src.addSkewed(r, 8192, passDay, false) }},
		{"row by row", func() { src.addSkewed(r, 500, passDay.AddDate(0, 0, 10), true) }},
	} {
		step.add()
		if err := idx.Refresh(t.Context()); err != nil {
			t.Fatalf("%s: Refresh: %v", step.name, err)
		}
		checkClasses(t, step.name, idx)
		answered := 0
		for name, rng := range ranges {
			sel := analytics.Selection{Cat: "c", Range: rng}
			for _, limit := range []int{1, 4, 25, 120, 5000} {
				q := queryOf(sel, limit)
				got := idx.answer(q, analytics.AllParts)
				idx.mu.RLock()
				p, ok := idx.plan(sel)
				for _, d := range postingDims {
					want := idx.groups(sel, d, limit, false)
					if !slices.Equal(got.Groups[d], want) {
						t.Errorf("%s, %s, list %v, limit %d:\n got  %v\n want %v", step.name, name, d, limit, got.Groups[d], want)
					}
					if !ok {
						continue
					}
					if top, found := p.top(d, limit); found {
						answered++
						if !slices.Equal(top, want) {
							t.Errorf("%s, %s, list %v, limit %d, top:\n got  %v\n want %v", step.name, name, d, limit, top, want)
						}
					}
				}
				idx.mu.RUnlock()
			}
		}
		if answered < 20 {
			t.Errorf("%s: the codes counted most answered %d lists: no test", step.name, answered)
		}
	}
}

// checkClasses checks that every question and answer code with at least
// 2^heavyFloor rows is in the class of its total.
func checkClasses(t *testing.T, name string, idx *Index) {
	t.Helper()
	c := idx.cats["c"]
	for k, d := range postingDims {
		in := map[uint32]bool{}
		for b, codes := range c.heavy[k] {
			for _, code := range codes {
				if classOf(c.totals[d][code]) == b {
					in[code] = true
				}
			}
		}
		classed := 0
		for code, n := range c.totals[d] {
			if n >= 1<<heavyFloor {
				classed++
				if !in[uint32(code)] {
					t.Errorf("%s: %v code %d (%d rows) is not in class %d", name, d, code, n, classOf(n))
				}
			}
		}
		if classed == 0 {
			t.Errorf("%s: no %v code has %d rows: no test", name, d, 1<<heavyFloor)
		}
	}
}
