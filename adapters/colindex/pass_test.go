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

// passSelections are selections whose lists read the same rows.
var passSelections = []struct {
	name string
	sel  analytics.Selection
}{
	{"two models and a persona, whole days", analytics.Selection{Cat: "c", Filters: analytics.Filters{
		Models: []string{"m0", "m2"}, Personas: []string{"p1"}}}},
	{"two models and a persona, not whole days", analytics.Selection{Cat: "c",
		Range:   analytics.Range{Start: passDay.Add(90 * time.Minute), End: passDay.Add(30 * time.Hour)},
		Filters: analytics.Filters{Models: []string{"m0", "m2"}, Personas: []string{"p1"}}}},
	{"popular question", analytics.Selection{Cat: "c", Filters: analytics.Filters{QuestionIDs: []string{"q-0"}}}},
	{"popular question and a topic", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(20 * time.Hour)},
		Filters: analytics.Filters{QuestionIDs: []string{"q-0", "q-7"}, Topics: []string{"t1"}}}},
	{"every dimension", analytics.Selection{Cat: "c", Filters: analytics.Filters{
		Topics: []string{"t0", "t1", "t3"}, Models: []string{"m1", "m2"}, Personas: []string{"p0", "p2"},
		QuestionIDs: []string{"q-0", "q-1", "q-2", "q-3"}, AnswerIDs: []string{"a-1", "a-2", "a-3", "a-4", "a-5"}}}},
	{"many questions and answers", analytics.Selection{Cat: "c", Range: analytics.Range{Start: passDay.Add(5 * time.Hour)},
		Filters: analytics.Filters{QuestionIDs: manyQuestions, AnswerIDs: []string{"a-1", "a-2", "a-3", "a-4", "a-5", "a-6"}}}},
	{"start only", analytics.Selection{Cat: "c", Range: analytics.Range{Start: passDay.Add(23 * time.Hour)}}},
	{"end only, most rows", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(40 * time.Hour)}}},
	{"a topic over the full range", analytics.Selection{Cat: "c", Filters: analytics.Filters{Topics: []string{"t2"}}}},
	{"a topic, not whole days", analytics.Selection{Cat: "c", Range: analytics.Range{End: passDay.Add(30 * time.Hour)},
		Filters: analytics.Filters{Topics: []string{"t2"}}}},
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

// interactions are the source's rows as the reference counts them.
func (s *rowSource) interactions() []analytics.Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]analytics.Interaction, len(s.rows))
	for k, r := range s.rows {
		out[k] = analytics.Interaction{Time: time.UnixMicro(r.Micros).UTC(), Cat: string(r.Cat), EventKind: analytics.EventKindAPI,
			Topic: string(r.Topic), Model: string(r.Model), Persona: string(r.Persona),
			QuestionID: string(r.QuestionID), Question: string(r.Question), AnswerID: string(r.AnswerID), Answer: string(r.Answer)}
	}
	return out
}

// checkLists asks idx for sel's answer, whole and part by part, with and
// without limits on the question and answer lists, and compares it with
// the reference's over the source's rows (in SortGroups order, which the
// reference leaves to the caller).
func checkLists(t *testing.T, idx *Index, src *rowSource, sel analytics.Selection) {
	t.Helper()
	rows := src.interactions()
	sorted := func(g []analytics.Group) []analytics.Group {
		g = slices.Clone(g)
		analytics.SortGroups(g)
		return g
	}
	for _, limit := range []int{0, 3} {
		q := queryOf(sel, limit)
		want := analytics.CountAnswer(rows, q, analytics.AllParts)
		got := idx.answer(q, analytics.AllParts)
		if got.Total != want.Total {
			t.Errorf("total (limit %d) = %d, the reference %d", limit, got.Total, want.Total)
		}
		for _, d := range analytics.Dimensions {
			want.Groups[d] = sorted(want.Groups[d])
			if !slices.Equal(got.Groups[d], want.Groups[d]) {
				t.Errorf("list %v (limit %d):\n got  %v\n want %v", d, limit, got.Groups[d], want.Groups[d])
			}
			one := idx.answer(q, analytics.ListOf(d))
			if !slices.Equal(one.Groups[d], want.Groups[d]) || one.Total != 0 || len(one.Groups) != 1 {
				t.Errorf("list %v alone (limit %d):\n got  %+v\n want %v", d, limit, one, want.Groups[d])
			}
		}
		if one := idx.answer(q, analytics.PartTotal); one.Total != want.Total || len(one.Groups) != 0 {
			t.Errorf("total alone (limit %d): %+v, want %d", limit, one, want.Total)
		}
	}
}

// TestFilteredLists checks the lists of filtered selections over enough
// rows that their counts are split over the cores.
func TestFilteredLists(t *testing.T) {
	src := &rowSource{}
	src.add(rand.New(rand.NewPCG(5, 6)), 2*parallelMin+1000)
	idx := buildFrom(t, src)
	for _, tc := range passSelections {
		t.Run(tc.name, func(t *testing.T) {
			checkLists(t, idx, src, tc.sel)
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
			before := buildFrom(t, src).answer(q, analytics.AllParts)
			src.add(r, 3000)
			after := buildFrom(t, src).answer(q, analytics.AllParts)
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
