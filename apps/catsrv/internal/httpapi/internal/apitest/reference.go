package apitest

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/core/analytics"
)

// Params is one request's query, kept as the core sees it so the
// reference can compute the same thing.
type Params struct {
	Cat, Start, End string
	Filters         analytics.Filters
	Limit           int
}

// Query is p as a query string.
func (p Params) Query() string {
	v := url.Values{}
	v.Set("catname", p.Cat)
	if p.Start != "" {
		v.Set("startDate", p.Start)
	}
	if p.End != "" {
		v.Set("endDate", p.End)
	}
	for _, d := range analytics.Dimensions {
		for _, x := range p.Filters.Values(d) {
			v.Add(d.String(), x)
		}
	}
	if p.Limit != 0 {
		v.Set("limit", strconv.Itoa(p.Limit))
	}
	return v.Encode()
}

// Reference computes the result of p with the core's reference aggregation.
func Reference(t *testing.T, p Params) analytics.Result {
	t.Helper()
	rng, err := analytics.ParseRange(p.Start, p.End)
	if err != nil {
		t.Fatal(err)
	}
	return analytics.Aggregate(Normalized(), analytics.Query{Cat: p.Cat, Range: rng, Filters: p.Filters, Limit: p.Limit})
}

// RouteSpec is what the spec says a route returns.
type RouteSpec struct {
	Filters, Limit bool
	Keys           []string
	Body           func(analytics.Result) map[string]any
}

// ResultKeys are the keys of an analytics result.
var ResultKeys = []string{"answers", "model_counts", "persona_counts", "questions", "topic_counts", "total_interactions"}

// ResultMap is the body of /all the spec gives for r, with its JSON names
// spelled out here rather than taken from any Go type.
func ResultMap(r analytics.Result) map[string]any {
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

// topicList is the JSON of a list of topic_counts.
func topicList(l []analytics.TopicCount) []map[string]any {
	return entries(l, func(c analytics.TopicCount) map[string]any {
		return map[string]any{"topic": c.Topic, "count": c.Count, "percentage": c.Percentage}
	})
}

// modelList is the JSON of a list of model_counts.
func modelList(l []analytics.ModelCount) []map[string]any {
	return entries(l, func(c analytics.ModelCount) map[string]any {
		return map[string]any{"membership": c.Membership, "count": c.Count}
	})
}

// questionList is the JSON of a list of questions.
func questionList(l []analytics.QuestionEntry) []map[string]any {
	return entries(l, func(q analytics.QuestionEntry) map[string]any {
		return map[string]any{"id": q.ID, "question": q.Question, "count": q.Count}
	})
}

// answerList is the JSON of a list of answers.
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

// RouteSpecs are what the spec says each analytics route returns.
var RouteSpecs = map[string]RouteSpec{
	"/all_warehouse": {true, true, append(slices.Clone(ResultKeys), "data_source", "performance_ms"),
		// The fixed clock makes the measured time exactly 0.
		func(r analytics.Result) map[string]any {
			return with(ResultMap(r), "performance_ms", 0, "data_source", "warehouse")
		}},
	"/all": {true, true, ResultKeys, ResultMap},
	"/all_legacy": {true, true, append(slices.Clone(ResultKeys), "data_source"),
		func(r analytics.Result) map[string]any { return with(ResultMap(r), "data_source", "legacy") }},
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

// DecodeResult reads an /all body.
func DecodeResult(t *testing.T, body []byte) analyticsapi.AnalyticsResult {
	t.Helper()
	var r analyticsapi.AnalyticsResult
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
