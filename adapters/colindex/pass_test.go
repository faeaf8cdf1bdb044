package colindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// rowSource is a colindex.Feed over rows held in memory; rows can be added
// between refreshes, as another writer would.
type rowSource struct {
	mu   sync.Mutex
	rows []analytics.FeedRow // row k has id k+1
}

func (s *rowSource) ReadSince(_ context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	s.mu.Lock()
	rows := slices.Clone(s.rows)
	s.mu.Unlock()
	last := after
	for k := int(after); k < len(rows); k++ {
		r := rows[k]
		if err := fn(&r); err != nil {
			return last, err
		}
		last = r.ID
	}
	return last, nil
}

var passDay = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// add appends n random rows over two days: question q-0 in about a
// tenth of them, the others spread over 300 questions.
func (s *rowSource) add(r *rand.Rand, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		q := fmt.Sprintf("q-%d", r.IntN(300))
		if r.IntN(10) == 0 {
			q = "q-0"
		}
		a := fmt.Sprintf("a-%d", r.IntN(20))
		s.rows = append(s.rows, analytics.FeedRow{
			ID: int64(len(s.rows) + 1), Micros: passDay.Add(time.Duration(r.IntN(48*3600)) * time.Second).UnixMicro(),
			Cat: []byte("c"), Topic: []byte(fmt.Sprintf("t%d", r.IntN(4))), Model: []byte(fmt.Sprintf("m%d", r.IntN(3))),
			Persona: []byte(fmt.Sprintf("p%d", r.IntN(3))), QuestionID: []byte(q), Question: []byte("text of " + q),
			AnswerID: []byte(a), Answer: []byte("text of " + a),
		})
	}
}

// passSelections are selections whose lists read the same rows, each
// with whether their whole answer should be counted in one pass.
var passSelections = []struct {
	name     string
	sel      analytics.Selection
	wantPass bool
}{
	{"two models and a persona, whole days", analytics.Selection{Cat: "c", Filters: analytics.Filters{
		Models: []string{"m0", "m2"}, Personas: []string{"p1"}}}, false},
	{"two models and a persona, not whole days", analytics.Selection{Cat: "c",
		Range:   analytics.Range{Start: passDay.Add(90 * time.Minute), End: passDay.Add(30 * time.Hour)},
		Filters: analytics.Filters{Models: []string{"m0", "m2"}, Personas: []string{"p1"}}}, true},
	{"popular question", analytics.Selection{Cat: "c", Filters: analytics.Filters{QuestionIDs: []string{"q-0"}}}, true},
	{"popular question and a topic", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(20 * time.Hour)},
		Filters: analytics.Filters{QuestionIDs: []string{"q-0", "q-7"}, Topics: []string{"t1"}}}, true},
	{"every dimension", analytics.Selection{Cat: "c", Filters: analytics.Filters{
		Topics: []string{"t0", "t1", "t3"}, Models: []string{"m1", "m2"}, Personas: []string{"p0", "p2"},
		QuestionIDs: []string{"q-0", "q-1", "q-2", "q-3"}, AnswerIDs: []string{"a-1", "a-2", "a-3", "a-4", "a-5"}}}, true},
	{"many questions and answers", analytics.Selection{Cat: "c", Range: analytics.Range{Start: passDay.Add(5 * time.Hour)},
		Filters: analytics.Filters{QuestionIDs: manyQuestions, AnswerIDs: []string{"a-1", "a-2", "a-3", "a-4", "a-5", "a-6"}}}, true},
	{"start only", analytics.Selection{Cat: "c", Range: analytics.Range{Start: passDay.Add(23 * time.Hour)}}, true},
	{"end only, most rows", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(40 * time.Hour)}}, false},
	{"a topic over the full range", analytics.Selection{Cat: "c", Filters: analytics.Filters{Topics: []string{"t2"}}}, false},
	{"a topic, not whole days", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(30 * time.Hour)},
		Filters: analytics.Filters{Topics: []string{"t2"}}}, true},
}

// manyQuestions are enough questions for a scan rather than their rows.
var manyQuestions = func() []string {
	var ids []string
	for k := range 90 {
		ids = append(ids, fmt.Sprintf("q-%d", k))
	}
	return ids
}()

func buildFrom(t *testing.T, src *rowSource) *Index {
	t.Helper()
	idx, err := Build(t.Context(), src)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return idx
}

// queryOf is the query of a selection, with a limit.
func queryOf(sel analytics.Selection, limit int) analytics.Query {
	return analytics.Query{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters, Limit: limit}
}

// withoutPass answers the query as if no pass were worth it: the total
// and each list counted alone.
func withoutPass(x *Index, q analytics.Query) analytics.Counts {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}
	if p, ok := x.plan(q.Selection()); ok {
		c.Total = p.total()
	}
	for _, d := range analytics.Dimensions {
		c.Groups[d] = x.groups(q.SelectionFor(d), d, q.LimitOf(d), false)
	}
	return c
}

// checkLists asks idx for sel's answer, whole and part by part, with and
// without limits on the question and answer lists, and compares it with
// the answer counted without a pass.
func checkLists(t *testing.T, idx *Index, sel analytics.Selection) {
	t.Helper()
	for _, limit := range []int{0, 3} {
		q := queryOf(sel, limit)
		want := withoutPass(idx, q)
		got, _ := idx.answer(q, analytics.AllParts)
		if got.Total != want.Total {
			t.Errorf("total (limit %d) = %d, without a pass %d", limit, got.Total, want.Total)
		}
		for _, d := range analytics.Dimensions {
			if !slices.Equal(got.Groups[d], want.Groups[d]) {
				t.Errorf("list %v (limit %d):\n got  %v\n want %v", d, limit, got.Groups[d], want.Groups[d])
			}
			one, _ := idx.answer(q, analytics.ListOf(d))
			if !slices.Equal(one.Groups[d], want.Groups[d]) || one.Total != 0 || len(one.Groups) != 1 {
				t.Errorf("list %v alone (limit %d):\n got  %+v\n want %v", d, limit, one, want.Groups[d])
			}
		}
		if one, _ := idx.answer(q, analytics.PartTotal); one.Total != want.Total || len(one.Groups) != 0 {
			t.Errorf("total alone (limit %d): %+v, want %d", limit, one, want.Total)
		}
	}
}

// TestPassListsEqualGroups checks that the lists one pass counts equal
// those counted alone, for filtered selections, over enough rows that
// the pass splits them.
func TestPassListsEqualGroups(t *testing.T) {
	src := &rowSource{}
	src.add(rand.New(rand.NewPCG(5, 6)), 2*parallelMin+1000)
	idx := buildFrom(t, src)
	for _, tc := range passSelections {
		t.Run(tc.name, func(t *testing.T) {
			if _, pass := idx.answer(queryOf(tc.sel, 0), analytics.AllParts); (pass != nil) != tc.wantPass {
				t.Fatalf("counted in one pass: %v, want %v", pass != nil, tc.wantPass)
			}
			checkLists(t, idx, tc.sel)
		})
	}
}

// TestAnswerCountsOneState: an answer counted while a refresh applies
// rows is wholly the answer from before the refresh or wholly the one
// from after it, never a mix of their parts.
func TestAnswerCountsOneState(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range passSelections {
		t.Run(tc.name, func(t *testing.T) {
			src := &rowSource{}
			src.add(r, 5000)
			idx := buildFrom(t, src)
			q := queryOf(tc.sel, 3)
			before, _ := buildFrom(t, src).answer(q, analytics.AllParts)
			src.add(r, 3000)
			after, _ := buildFrom(t, src).answer(q, analytics.AllParts)
			if reflect.DeepEqual(before, after) {
				t.Fatalf("the added rows change nothing in the answer: no test")
			}
			done := make(chan error)
			go func() { done <- idx.Refresh(context.Background()) }()
			for refreshed := false; !refreshed; {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("Refresh: %v", err)
					}
					refreshed = true
				default:
				}
				got, err := idx.Answer(t.Context(), q, analytics.AllParts)
				if err != nil {
					t.Fatalf("Answer: %v", err)
				}
				if !reflect.DeepEqual(got, before) && !reflect.DeepEqual(got, after) {
					t.Fatalf("an answer mixes states:\n got    %+v\n before %+v\n after  %+v", got, before, after)
				}
			}
			if got, _ := idx.Answer(t.Context(), q, analytics.AllParts); !reflect.DeepEqual(got, after) {
				t.Errorf("after the refresh:\n got  %+v\n want %+v", got, after)
			}
		})
	}
}

// TestPositionParts: a pass over posting lists split in parts (as over
// the cores when the positions are many) counts what one part counts,
// for lists cut anywhere, one or several of them.
func TestPositionParts(t *testing.T) {
	src := &rowSource{}
	src.add(rand.New(rand.NewPCG(9, 10)), 20000)
	idx := buildFrom(t, src)
	for _, f := range []analytics.Filters{
		{QuestionIDs: []string{"q-0"}},
		{QuestionIDs: []string{"q-0", "q-5", "q-9"}, Models: []string{"m1"}, AnswerIDs: []string{"a-1", "a-2", "a-3"}},
		{AnswerIDs: []string{"a-4"}, Personas: []string{"p0", "p1"}},
	} {
		p, ok := idx.plan(analytics.Selection{Cat: "c", Filters: f})
		if !ok || p.postings == nil {
			t.Fatalf("%+v: no posting lists to count", f)
		}
		want := [dimensions]bool{analytics.Topic: true, analytics.Answer: true, analytics.Question: f.AnswerIDs != nil}
		pf := passFilters{combo: orAll(p.comboAllowed, len(p.cat.combos)),
			question: orAll(p.allowBy[analytics.Question], p.cat.dicts[analytics.Question].len()),
			answer:   orAll(p.allowBy[analytics.Answer], p.cat.dicts[analytics.Answer].len()), questions: want[analytics.Question]}
		one := p.positionParts(pf, 1)
		if slices.Max(one.answer) == 0 {
			t.Fatalf("%+v: nothing counted: no test", f)
		}
		for _, parts := range []int{2, 3, 7} {
			if got := p.positionParts(pf, parts); !reflect.DeepEqual(got, one) {
				t.Errorf("%+v in %d parts:\n got  %+v\n want %+v", f, parts, got, one)
			}
		}
	}
}
