package httpapi_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"

	"github.com/catsrv/catsrv/core/analytics"
)

// params is one request's query, kept as the core sees it so the
// reference can compute the same thing.
type params struct {
	cat, start, end string
	filters         analytics.Filters
	limit           int
}

func (p params) query() string {
	v := url.Values{}
	v.Set("catname", p.cat)
	if p.start != "" {
		v.Set("startDate", p.start)
	}
	if p.end != "" {
		v.Set("endDate", p.end)
	}
	for _, d := range analytics.Dimensions {
		for _, x := range p.filters.Values(d) {
			v.Add(d.String(), x)
		}
	}
	if p.limit != 0 {
		v.Set("limit", strconv.Itoa(p.limit))
	}
	return v.Encode()
}

// reference computes the result of p with the core's reference aggregation.
func reference(t *testing.T, p params) analytics.Result {
	t.Helper()
	rng, err := analytics.ParseRange(p.start, p.end)
	if err != nil {
		t.Fatal(err)
	}
	return analytics.Aggregate(Normalized(), analytics.Query{Cat: p.cat, Range: rng, Filters: p.filters, Limit: p.limit})
}

// routeSpec is what the spec says a route returns.
type routeSpec struct {
	filters, limit bool
	Keys           []string
	body           func(analytics.Result) map[string]any
}

var resultKeys = []string{"answers", "model_counts", "persona_counts", "questions", "topic_counts", "total_interactions"}

// resultMap is the body of /all the spec gives for r, with its JSON names
// spelled out here rather than taken from any Go type.
func resultMap(r analytics.Result) map[string]any {
	return map[string]any{
		"total_interactions": r.TotalInteractions,
		"topic_counts":       topicList(r.TopicCounts),
		"model_counts":       modelList(r.ModelCounts),
		"persona_counts": entries(r.PersonaCounts, func(c analytics.PersonaCount) map[string]any {
			return map[string]any{"persona": c.Persona, "count": c.Count}
		}),
		"questions": questionList(r.Questions),
		"answers":   answerList(r.Answers),
	}
}

func topicList(l []analytics.TopicCount) []map[string]any {
	return entries(l, func(c analytics.TopicCount) map[string]any {
		return map[string]any{"topic": c.Topic, "count": c.Count, "percentage": c.Percentage}
	})
}

func modelList(l []analytics.ModelCount) []map[string]any {
	return entries(l, func(c analytics.ModelCount) map[string]any {
		return map[string]any{"membership": c.Membership, "count": c.Count}
	})
}

func questionList(l []analytics.QuestionEntry) []map[string]any {
	return entries(l, func(q analytics.QuestionEntry) map[string]any {
		return map[string]any{"id": q.ID, "question": q.Question, "count": q.Count}
	})
}

func answerList(l []analytics.AnswerEntry) []map[string]any {
	return entries(l, func(a analytics.AnswerEntry) map[string]any {
		return map[string]any{"id": a.ID, "answers": a.Answers, "count": a.Count}
	})
}

// entries maps a list to JSON objects, an empty list to [].
func entries[T any](l []T, f func(T) map[string]any) []map[string]any {
	out := []map[string]any{}
	for _, x := range l {
		out = append(out, f(x))
	}
	return out
}

func with(m map[string]any, kv ...any) map[string]any {
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

var routeSpecs = map[string]routeSpec{
	"/all_warehouse": {true, true, append(slices.Clone(resultKeys), "data_source", "performance_ms"),
		// The fixed clock makes the measured time exactly 0.
		func(r analytics.Result) map[string]any {
			return with(resultMap(r), "performance_ms", 0, "data_source", "warehouse")
		}},
	"/all": {true, true, resultKeys, resultMap},
	"/all_legacy": {true, true, append(slices.Clone(resultKeys), "data_source"),
		func(r analytics.Result) map[string]any { return with(resultMap(r), "data_source", "legacy") }},
	"/metrics/topic_counts": {false, false, []string{"topic_counts"},
		func(r analytics.Result) map[string]any {
			return map[string]any{"topic_counts": topicList(r.TopicCounts)}
		}},
	"/metrics/model_counts": {false, false, []string{"model_counts"},
		func(r analytics.Result) map[string]any {
			return map[string]any{"model_counts": modelList(r.ModelCounts)}
		}},
	"/metrics/total_interactions": {false, false, []string{"total_interactions"},
		func(r analytics.Result) map[string]any {
			return map[string]any{"total_interactions": r.TotalInteractions}
		}},
	"/questions": {false, true, []string{"questions"},
		func(r analytics.Result) map[string]any { return map[string]any{"questions": questionList(r.Questions)} }},
	"/answers": {false, true, []string{"answers"},
		func(r analytics.Result) map[string]any { return map[string]any{"answers": answerList(r.Answers)} }},
}

func TestRoutesMatchReference(t *testing.T) {
	e := NewEnv(t)
	cases := []struct {
		name    string
		p       params
		filters bool // only on routes that take filters
		limit   bool // only on routes that take limit
	}{
		{name: "whole log", p: params{}},
		{name: "start only", p: params{start: "2024-02-01"}},
		{name: "end only", p: params{end: "2024-02-01"}},
		{name: "both dates", p: params{start: "2024-01-11", end: "2024-02-11"}},
		{name: "range without data", p: params{start: "2030-01-01"}},
		{name: "limit", p: params{limit: 1}, limit: true},
		{name: "limit above size", p: params{limit: 1000}, limit: true},
		{name: "model repeated", p: params{filters: analytics.Filters{Models: []string{"gpt-a", "gpt-b"}}}, filters: true},
		{name: "topic", p: params{filters: analytics.Filters{Topics: []string{"billing"}}}, filters: true},
		{name: "persona and model", p: params{filters: analytics.Filters{Personas: []string{"formal"}, Models: []string{"gpt-a"}}}, filters: true},
		{name: "derived question id", p: params{filters: analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID("How do I pay?")}}}, filters: true},
		{name: "explicit answer id", p: params{filters: analytics.Filters{AnswerIDs: []string{"a-address"}}}, filters: true},
		{name: "unknown filter value", p: params{filters: analytics.Filters{Topics: []string{"nope"}}}, filters: true},
		{name: "filters and dates", p: params{start: "2024-01-11", filters: analytics.Filters{Topics: []string{"billing", "shipping"}}, limit: 2}, filters: true, limit: true},
	}
	cats := []struct{ name, auth string }{{PrivateCat, Bearer(e.Admin)}, {PublicCat, ""}}
	for _, route := range AnalyticsRoutes {
		spec := routeSpecs[route]
		for _, c := range cases {
			if (c.filters && !spec.filters) || (c.limit && !spec.limit) {
				continue
			}
			for _, cat := range cats {
				t.Run(route+"/"+c.name+"/"+cat.name, func(t *testing.T) {
					p := c.p
					p.cat = cat.name
					res := e.Get(t, AnalyticsPrefix+route+"?"+p.query(), cat.auth)
					if res.Status != 200 {
						t.Fatalf("status %d: %s", res.Status, res.Body)
					}
					want := slices.Sorted(slices.Values(spec.Keys))
					if got := Keys(t, res.Body); !slices.Equal(got, want) {
						t.Errorf("keys %v, want %v", got, want)
					}
					AssertJSON(t, res.Body, spec.body(reference(t, p)))
					if strings.Contains(string(res.Body), "null") {
						t.Errorf("a list is null: %s", res.Body)
					}
				})
			}
		}
	}
}

// TestFixtureIsNotTrivial guards the reference comparisons above against a
// log that would make every list empty.
func TestFixtureIsNotTrivial(t *testing.T) {
	for _, cat := range []string{PrivateCat, PublicCat} {
		r := reference(t, params{cat: cat})
		if r.TotalInteractions < 3 || len(r.TopicCounts) < 2 || len(r.ModelCounts) < 2 || len(r.Questions) < 2 {
			t.Errorf("%s: reference result too small to test with: %+v", cat, r)
		}
	}
}

// decodeResult reads an /all body.
func decodeResult(t *testing.T, body []byte) analyticsapi.AnalyticsResult {
	t.Helper()
	var r analyticsapi.AnalyticsResult
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSelectiveFilteringOverHTTP(t *testing.T) {
	e := NewEnv(t)
	all := func(query string) analyticsapi.AnalyticsResult {
		res := e.Get(t, AnalyticsPrefix+"/all?catname="+PrivateCat+query, Bearer(e.Admin))
		if res.Status != 200 {
			t.Fatalf("%s: status %d: %s", query, res.Status, res.Body)
		}
		return decodeResult(t, res.Body)
	}
	whole := all("")
	billing := all("&topic=billing")

	t.Run("topic list ignores the topic filter", func(t *testing.T) {
		if !slices.Equal(billing.TopicCounts, whole.TopicCounts) || len(whole.TopicCounts) < 2 {
			t.Errorf("topic_counts %v, want the unfiltered %v", billing.TopicCounts, whole.TopicCounts)
		}
	})
	t.Run("total applies the topic filter", func(t *testing.T) {
		var want int64
		for _, tc := range whole.TopicCounts {
			if tc.Topic == "billing" {
				want = tc.Count
			}
		}
		if billing.TotalInteractions != want || want >= whole.TotalInteractions {
			t.Errorf("total %d, want billing's %d (of %d)", billing.TotalInteractions, want, whole.TotalInteractions)
		}
	})
	t.Run("other lists apply the topic filter", func(t *testing.T) {
		if slices.Equal(billing.ModelCounts, whole.ModelCounts) || slices.Equal(billing.Questions, whole.Questions) {
			t.Errorf("model_counts or questions unchanged by the topic filter: %+v", billing)
		}
	})
	t.Run("values of one filter are OR-ed", func(t *testing.T) {
		a, b := all("&model=gpt-a").TotalInteractions, all("&model=gpt-b").TotalInteractions
		if both := all("&model=gpt-a&model=gpt-b").TotalInteractions; both != a+b || a == 0 || b == 0 {
			t.Errorf("model=gpt-a&model=gpt-b: %d, want %d+%d", both, a, b)
		}
	})
	t.Run("different filters are AND-ed", func(t *testing.T) {
		a := all("&model=gpt-a").TotalInteractions
		if both := all("&model=gpt-a&persona=casual").TotalInteractions; both >= a || both == 0 {
			t.Errorf("model=gpt-a&persona=casual: %d, want fewer than model=gpt-a's %d but some", both, a)
		}
	})
}

func TestGetCats(t *testing.T) {
	e := NewEnv(t)
	private := map[string]any{"name": PrivateCat, "chat_mode": "legacy", "analytics_public": false}
	public := map[string]any{"name": PublicCat, "chat_mode": "agent", "analytics_public": true}
	cases := []struct {
		name string
		auth string
		want []map[string]any
	}{
		{"admin sees every CAT", Bearer(e.Admin), []map[string]any{private, public}},
		{"anonymous sees public CATs", "", []map[string]any{public}},
		{"non-admin sees public CATs", Bearer(e.Viewer), []map[string]any{public}},
		{"bad token sees public CATs", Bearer("not-a-jwt"), []map[string]any{public}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.Get(t, AnalyticsPrefix+"/get_cats", c.auth)
			if res.Status != 200 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			AssertJSON(t, res.Body, map[string]any{"cats": c.want})
		})
	}
}
