package analyticsapi_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/analytics"
)

// windowBody decodes the parts of a paged response the test checks.
type windowBody struct {
	Questions      []struct{ ID, Question string } `json:"questions"`
	Answers        []struct{ ID, Answers string }  `json:"answers"`
	QuestionsTotal *int64                          `json:"questions_total"`
	AnswersTotal   *int64                          `json:"answers_total"`
	Total          *int64                          `json:"total"`
}

// TestWindowOverHTTP: offset and q page and search the question and
// answer lists of /all*, /questions and /answers as the reference does,
// with the other filters applied, and add the totals; the keys are the
// spec's plus exactly the totals.
func TestWindowOverHTTP(t *testing.T) {
	e := NewEnv(t)
	rng, err := analytics.ParseRange("", "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		query  url.Values
		window analytics.Window
		limit  int
		models []string
	}{
		{"offset only", url.Values{"offset": {"1"}}, analytics.Window{Paged: true, Offset: 1}, 0, nil},
		{"offset zero adds totals", url.Values{"offset": {"0"}, "limit": {"2"}}, analytics.Window{Paged: true}, 2, nil},
		{"search any case", url.Values{"q": {"PAY"}}, analytics.Window{Paged: true, Search: "PAY"}, 0, nil},
		{"search and page", url.Values{"q": {"o"}, "offset": {"1"}, "limit": {"1"}}, analytics.Window{Paged: true, Offset: 1, Search: "o"}, 1, nil},
		{"search with a filter", url.Values{"q": {"o"}, "model": {"gpt-a"}}, analytics.Window{Paged: true, Search: "o"}, 0, []string{"gpt-a"}},
		{"no match", url.Values{"q": {"zebra"}}, analytics.Window{Paged: true, Search: "zebra"}, 0, nil},
		{"past the end", url.Values{"offset": {"99"}}, analytics.Window{Paged: true, Offset: 99}, 0, nil},
	}
	for _, c := range cases {
		want := analytics.Aggregate(Normalized(), analytics.Query{Cat: PrivateCat, Range: rng, Limit: c.limit,
			Filters: analytics.Filters{Models: c.models}, Window: c.window})
		for _, route := range []string{"/all", "/all_warehouse", "/all_legacy", "/questions", "/answers"} {
			t.Run(c.name+route, func(t *testing.T) {
				v := url.Values{"catname": {PrivateCat}}
				for k, x := range c.query {
					v[k] = x
				}
				res := e.Get(t, AnalyticsPrefix+route+"?"+v.Encode(), Bearer(e.Admin))
				if res.Status != 200 {
					t.Fatalf("status %d: %s", res.Status, res.Body)
				}
				var got windowBody
				if err := json.Unmarshal(res.Body, &got); err != nil {
					t.Fatal(err)
				}
				keys := Keys(t, res.Body)
				switch route {
				case "/questions":
					checkQuestions(t, got, want)
					checkTotal(t, got.Total, want.QuestionsTotal)
					if !slices.Equal(keys, []string{"questions", "total"}) {
						t.Errorf("keys %v", keys)
					}
				case "/answers":
					checkAnswers(t, got, want)
					checkTotal(t, got.Total, want.AnswersTotal)
					if !slices.Equal(keys, []string{"answers", "total"}) {
						t.Errorf("keys %v", keys)
					}
				default:
					checkQuestions(t, got, want)
					checkAnswers(t, got, want)
					checkTotal(t, got.QuestionsTotal, want.QuestionsTotal)
					checkTotal(t, got.AnswersTotal, want.AnswersTotal)
					if !slices.Contains(keys, "questions_total") || !slices.Contains(keys, "answers_total") || !slices.Contains(keys, "topic_counts") {
						t.Errorf("keys %v", keys)
					}
				}
			})
		}
	}
	// The fixture makes the cases above tell something.
	paged := analytics.Aggregate(Normalized(), analytics.Query{Cat: PrivateCat, Range: rng, Limit: 1,
		Window: analytics.Window{Paged: true, Offset: 1, Search: "o"}})
	if paged.QuestionsTotal < 2 || paged.AnswersTotal < 3 || len(paged.Questions) != 1 {
		t.Errorf("fixture too small: %+v", paged)
	}
}

func checkQuestions(t *testing.T, got windowBody, want analytics.Result) {
	t.Helper()
	var g, w []string
	for _, q := range got.Questions {
		g = append(g, q.ID+"|"+q.Question)
	}
	for _, q := range want.Questions {
		w = append(w, q.ID+"|"+q.Question)
	}
	if !slices.Equal(g, w) {
		t.Errorf("questions %v, want %v", g, w)
	}
}

func checkAnswers(t *testing.T, got windowBody, want analytics.Result) {
	t.Helper()
	var g, w []string
	for _, a := range got.Answers {
		g = append(g, a.ID+"|"+a.Answers)
	}
	for _, a := range want.Answers {
		w = append(w, a.ID+"|"+a.Answers)
	}
	if !slices.Equal(g, w) {
		t.Errorf("answers %v, want %v", g, w)
	}
}

func checkTotal(t *testing.T, got *int64, want int64) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("total %v, want %d", got, want)
	}
}

// TestWindowRejectsBadParams: a negative or non-numeric offset is a 422.
func TestWindowRejectsBadParams(t *testing.T) {
	e := NewEnv(t)
	for _, q := range []string{"offset=-1", "offset=x"} {
		res := e.Get(t, AnalyticsPrefix+"/questions?catname="+PrivateCat+"&"+q, Bearer(e.Admin))
		if res.Status != 422 {
			t.Errorf("%s: status %d, want 422: %s", q, res.Status, res.Body)
		}
	}
}
