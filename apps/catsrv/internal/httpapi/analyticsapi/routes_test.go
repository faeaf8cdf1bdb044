package analyticsapi_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"

	"github.com/catsrv/catsrv/core/analytics"
)

func TestRoutesMatchReference(t *testing.T) {
	e := NewEnv(t)
	cases := []struct {
		name    string
		p       Params
		filters bool // only on routes that take filters
		limit   bool // only on routes that take limit
	}{
		{name: "whole log", p: Params{}},
		{name: "start only", p: Params{Start: "2024-02-01"}},
		{name: "end only", p: Params{End: "2024-02-01"}},
		{name: "both dates", p: Params{Start: "2024-01-11", End: "2024-02-11"}},
		{name: "range without data", p: Params{Start: "2030-01-01"}},
		{name: "limit", p: Params{Limit: 1}, limit: true},
		{name: "limit above size", p: Params{Limit: 1000}, limit: true},
		{name: "model repeated", p: Params{Filters: analytics.Filters{Models: []string{"gpt-a", "gpt-b"}}}, filters: true},
		{name: "topic", p: Params{Filters: analytics.Filters{Topics: []string{"billing"}}}, filters: true},
		{name: "persona and model", p: Params{Filters: analytics.Filters{Personas: []string{"formal"}, Models: []string{"gpt-a"}}}, filters: true},
		{name: "derived question id", p: Params{Filters: analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID("How do I pay?")}}}, filters: true},
		{name: "explicit answer id", p: Params{Filters: analytics.Filters{AnswerIDs: []string{"a-address"}}}, filters: true},
		{name: "unknown filter value", p: Params{Filters: analytics.Filters{Topics: []string{"nope"}}}, filters: true},
		{name: "filters and dates", p: Params{Start: "2024-01-11", Filters: analytics.Filters{Topics: []string{"billing", "shipping"}}, Limit: 2}, filters: true, limit: true},
	}
	cats := []struct{ name, auth string }{{PrivateCat, Bearer(e.Admin)}, {PublicCat, ""}}
	for _, route := range AnalyticsRoutes {
		spec := RouteSpecs[route]
		for _, c := range cases {
			if (c.filters && !spec.Filters) || (c.limit && !spec.Limit) {
				continue
			}
			for _, cat := range cats {
				t.Run(route+"/"+c.name+"/"+cat.name, func(t *testing.T) {
					p := c.p
					p.Cat = cat.name
					res := e.Get(t, AnalyticsPrefix+route+"?"+p.Query(), cat.auth)
					if res.Status != 200 {
						t.Fatalf("status %d: %s", res.Status, res.Body)
					}
					want := slices.Sorted(slices.Values(spec.Keys))
					if got := Keys(t, res.Body); !slices.Equal(got, want) {
						t.Errorf("keys %v, want %v", got, want)
					}
					AssertJSON(t, res.Body, spec.Body(Reference(t, p)))
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
		r := Reference(t, Params{Cat: cat})
		if r.TotalInteractions < 3 || len(r.TopicCounts) < 2 || len(r.ModelCounts) < 2 || len(r.Questions) < 2 {
			t.Errorf("%s: reference result too small to test with: %+v", cat, r)
		}
	}
}

func TestSelectiveFilteringOverHTTP(t *testing.T) {
	e := NewEnv(t)
	all := func(query string) analyticsapi.AnalyticsResult {
		res := e.Get(t, AnalyticsPrefix+"/all?catname="+PrivateCat+query, Bearer(e.Admin))
		if res.Status != 200 {
			t.Fatalf("%s: status %d: %s", query, res.Status, res.Body)
		}
		return DecodeResult(t, res.Body)
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
	// retention keys only where set
	public := map[string]any{"name": PublicCat, "chat_mode": "agent", "analytics_public": true, "retention_days": 3650.0, "chat_retention_days": 365.0}
	cases := []struct {
		name string
		auth string
		want []map[string]any
	}{
		{"admin sees every CAT", Bearer(e.Admin), []map[string]any{private, public}},
		{"anonymous sees public CATs", "", []map[string]any{public}},
		{"non-admin sees public CATs", Bearer(e.Viewer), []map[string]any{public}},
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
	// A token that does not verify is refused, as on every other
	// analytics route, rather than taken for no token.
	for name, auth := range map[string]string{"bad token": Bearer("not-a-jwt"), "malformed header": "Basic abc"} {
		if res := e.Get(t, AnalyticsPrefix+"/get_cats", auth); res.Status != 401 {
			t.Errorf("%s: status %d, want 401: %s", name, res.Status, res.Body)
		}
	}
}
