package colindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// rowSource is a Source over rows held in memory; rows can be added
// between refreshes, as another writer would.
type rowSource struct {
	mu   sync.Mutex
	rows []Row // row k has id k+1
}

func (s *rowSource) ReadSince(_ context.Context, after int64, fn func(*Row) error) (int64, error) {
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
		s.rows = append(s.rows, Row{
			ID: int64(len(s.rows) + 1), Micros: passDay.Add(time.Duration(r.IntN(48*3600)) * time.Second).UnixMicro(),
			Cat: []byte("c"), Topic: []byte(fmt.Sprintf("t%d", r.IntN(4))), Model: []byte(fmt.Sprintf("m%d", r.IntN(3))),
			Persona: []byte(fmt.Sprintf("p%d", r.IntN(3))), QuestionID: []byte(q), Question: []byte("text of " + q),
			AnswerID: []byte(a), Answer: []byte("text of " + a),
		})
	}
}

// passSelections are selections whose lists read the same rows, each
// with whether Total should leave a pass in the memo.
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

// listSelection is sel without d's own filter, as the reporter asks.
func listSelection(sel analytics.Selection, d analytics.Dimension) analytics.Selection {
	sel.Filters = sel.Filters.Without(d)
	return sel
}

// checkLists asks idx for sel's result as the reporter does, with and
// without limits on the question and answer lists, and compares it with
// ref, an index whose memo is unused (ref's Total comes last).
func checkLists(t *testing.T, idx, ref *Index, sel analytics.Selection) {
	t.Helper()
	for _, limit := range []int{0, 3} {
		total, err := idx.Total(t.Context(), sel)
		if err != nil {
			t.Fatalf("Total: %v", err)
		}
		for _, d := range analytics.Dimensions {
			n := 0
			if d == analytics.Question || d == analytics.Answer {
				n = limit
			}
			got, err := idx.groups(t.Context(), listSelection(sel, d), d, n)
			if err != nil {
				t.Fatalf("groups: %v", err)
			}
			want, err := ref.groups(t.Context(), listSelection(sel, d), d, n)
			if err != nil {
				t.Fatalf("groups: %v", err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("groups(%v, limit %d):\n got  %v\n want %v", d, n, got, want)
			}
		}
		if len(idx.memo.Values()) != 0 {
			t.Errorf("the lists left %d memo entries unserved", len(idx.memo.Values()))
		}
		if len(ref.memo.Values()) != 0 {
			t.Fatalf("the reference index used its memo")
		}
		want, err := ref.Total(t.Context(), sel)
		if err != nil {
			t.Fatalf("Total: %v", err)
		}
		ref.memo.Invalidate()
		if total != want {
			t.Errorf("Total = %d, without the memo %d", total, want)
		}
	}
}

// TestPassListsEqualGroups checks that the lists one pass counts equal
// those Groups and TopGroups count alone, for filtered selections, over
// enough rows that the pass splits them.
func TestPassListsEqualGroups(t *testing.T) {
	src := &rowSource{}
	src.add(rand.New(rand.NewPCG(5, 6)), 2*parallelMin+1000)
	idx, ref := buildFrom(t, src), buildFrom(t, src)
	for _, tc := range passSelections {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := idx.Total(t.Context(), tc.sel); err != nil {
				t.Fatalf("Total: %v", err)
			}
			if got := len(idx.memo.Values()) > 0; got != tc.wantPass {
				t.Fatalf("a pass kept: %v, want %v", got, tc.wantPass)
			}
			idx.memo.Invalidate()
			checkLists(t, idx, ref, tc.sel)
		})
	}
}

// TestPassNotServedAfterRefresh: lists a pass counted (or was to count)
// before a refresh applied rows are not served after it.
func TestPassNotServedAfterRefresh(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range passSelections {
		if !tc.wantPass {
			continue
		}
		for _, counted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/counted %v", tc.name, counted), func(t *testing.T) {
				src := &rowSource{}
				src.add(r, 5000)
				idx := buildFrom(t, src)
				if _, err := idx.Total(t.Context(), tc.sel); err != nil {
					t.Fatalf("Total: %v", err)
				}
				if len(idx.memo.Values()) == 0 {
					t.Fatalf("Total kept no pass")
				}
				if counted {
					for _, pass := range idx.memo.Values() {
						pass.run()
					}
				}
				src.add(r, 3000)
				if err := idx.Refresh(t.Context()); err != nil {
					t.Fatalf("Refresh: %v", err)
				}
				ref := buildFrom(t, src)
				for _, d := range analytics.Dimensions {
					got, err := idx.Groups(t.Context(), listSelection(tc.sel, d), d)
					if err != nil {
						t.Fatalf("Groups: %v", err)
					}
					want, err := ref.Groups(t.Context(), listSelection(tc.sel, d), d)
					if err != nil {
						t.Fatalf("Groups: %v", err)
					}
					if !slices.Equal(got, want) {
						t.Errorf("Groups(%v) after the refresh:\n got  %v\n want %v", d, got, want)
					}
				}
			})
		}
	}
}
