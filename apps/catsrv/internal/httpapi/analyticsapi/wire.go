package analyticsapi

import (
	"net/http"
	"net/url"
	"unsafe"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics"
)

// This file holds the wire shapes of the analytics routes: their query
// parameters and response bodies, with the spec's names (§2.1, §4.1). The
// bounds on parameters make huma reject absurd input with a 422 before any
// handler runs.

// CommonParams are the parameters of every analytics route but /get_cats.
type CommonParams struct {
	Cat       string `query:"catname" required:"true" maxLength:"256" doc:"Name of the CAT; it must exist in the configuration." example:"demo"`
	StartDate string `query:"startDate" maxLength:"64" doc:"Inclusive lower bound, a UTC day YYYY-MM-DD." example:"2024-01-01"`
	EndDate   string `query:"endDate" maxLength:"64" doc:"Exclusive upper bound, a UTC day YYYY-MM-DD." example:"2024-02-01"`
}

// LimitParam bounds the question and answer lists.
type LimitParam struct {
	Limit int `query:"limit" minimum:"0" maximum:"100000" doc:"Keep only the first limit questions and answers; 0 or absent keeps all."`
}

// WindowParams page and search the question and answer lists. They are
// not in the spec: without them a response is exactly the spec's shape;
// with either, the lists are cut to the window and their totals added.
type WindowParams struct {
	Offset int    `query:"offset" minimum:"0" maximum:"10000000" doc:"Skip the first offset questions and answers (after the search); giving it (0 included) adds the totals to the response."`
	Search string `query:"q" maxLength:"256" doc:"Keep only the questions and answers whose text contains this, ignoring case; giving it (empty included) adds the totals to the response."`
	paged  bool
}

// Resolve notes whether offset or q was given at all.
func (w *WindowParams) Resolve(ctx huma.Context) []error {
	u := ctx.URL()
	v := u.Query()
	w.paged = v.Has("offset") || v.Has("q")
	return nil
}

// window returns the core's window: paged when offset or q was given.
func (w WindowParams) window() analytics.Window {
	if !w.paged {
		return analytics.Window{}
	}
	return analytics.Window{Paged: true, Offset: w.Offset, Search: w.Search}
}

// FilterParams are the filters of the /all* routes. Values of one filter
// are OR-ed, different filters AND-ed; each list ignores its own filter.
type FilterParams struct {
	Model      []string `query:"model,explode" nullable:"false" maxItems:"100" maxLength:"4096" doc:"Keep interactions of these models (repeat the parameter for several)."`
	Persona    []string `query:"persona,explode" nullable:"false" maxItems:"100" maxLength:"4096" doc:"Keep interactions of these personas."`
	Topic      []string `query:"topic,explode" nullable:"false" maxItems:"100" maxLength:"4096" doc:"Keep interactions of these topics."`
	QuestionID []string `query:"questionid,explode" nullable:"false" maxItems:"100" maxLength:"4096" doc:"Keep interactions of these question ids."`
	AnswerID   []string `query:"answerid,explode" nullable:"false" maxItems:"100" maxLength:"4096" doc:"Keep interactions of these answer ids."`
}

// filters returns the core's filters.
func (f FilterParams) filters() analytics.Filters {
	return analytics.Filters{
		Models:      f.Model,
		Personas:    f.Persona,
		Topics:      f.Topic,
		QuestionIDs: f.QuestionID,
		AnswerIDs:   f.AnswerID,
	}
}

// fullInput is the input of the /all* routes.
type fullInput struct {
	CommonParams
	FilterParams
	LimitParam
	WindowParams
}

// listInput is the input of /questions and /answers; the filters are an
// extension of the spec's parameters, as on the /all* routes.
type listInput struct {
	CommonParams
	FilterParams
	LimitParam
	WindowParams
}

// countInput is the input of the /metrics routes.
type countInput struct {
	CommonParams
}

// AnalyticsResult is the analytics result of spec §2.1, as /all returns it.
type AnalyticsResult struct {
	TotalInteractions int64           `json:"total_interactions" doc:"Interactions passing every filter."`
	TopicCounts       []TopicCount    `json:"topic_counts" nullable:"false" doc:"Topic distribution; ignores the topic filter."`
	ModelCounts       []ModelCount    `json:"model_counts" nullable:"false" doc:"Model usage; ignores the model filter."`
	PersonaCounts     []PersonaCount  `json:"persona_counts" nullable:"false" doc:"Persona distribution; ignores the persona filter."`
	Questions         []QuestionEntry `json:"questions" nullable:"false" doc:"Unique questions; ignores the questionid filter."`
	Answers           []AnswerEntry   `json:"answers" nullable:"false" doc:"Unique answers; ignores the answerid filter."`
	// The totals are there only when offset or q was given.
	QuestionsTotal *int64 `json:"questions_total,omitempty" doc:"How many questions match q (all when q is empty), before offset and limit; only when offset or q is given."`
	AnswersTotal   *int64 `json:"answers_total,omitempty" doc:"How many answers match q, before offset and limit; only when offset or q is given."`
}

// WarehouseResult is what /all_warehouse returns.
type WarehouseResult struct {
	AnalyticsResult
	PerformanceMS float64 `json:"performance_ms" doc:"Server-side query time in milliseconds."`
	DataSource    string  `json:"data_source" enum:"warehouse" doc:"Always warehouse."`
}

// LegacyResult is what /all_legacy returns.
type LegacyResult struct {
	AnalyticsResult
	DataSource string `json:"data_source" enum:"legacy" doc:"Always legacy."`
}

// TopicCountsBody is what /metrics/topic_counts returns.
type TopicCountsBody struct {
	TopicCounts []TopicCount `json:"topic_counts" nullable:"false"`
}

// ModelCountsBody is what /metrics/model_counts returns.
type ModelCountsBody struct {
	ModelCounts []ModelCount `json:"model_counts" nullable:"false"`
}

// TotalInteractionsBody is what /metrics/total_interactions returns.
type TotalInteractionsBody struct {
	TotalInteractions int64 `json:"total_interactions"`
}

// QuestionsBody is what /questions returns.
type QuestionsBody struct {
	Questions []QuestionEntry `json:"questions" nullable:"false"`
	Total     *int64          `json:"total,omitempty" doc:"How many questions match q, before offset and limit; only when offset or q is given."`
}

// AnswersBody is what /answers returns.
type AnswersBody struct {
	Answers []AnswerEntry `json:"answers" nullable:"false"`
	Total   *int64        `json:"total,omitempty" doc:"How many answers match q, before offset and limit; only when offset or q is given."`
}

// CatsBody is what /get_cats returns.
type CatsBody struct {
	Cats []CatEntry `json:"cats" nullable:"false"`
}

// CatEntry is one CAT of /get_cats (spec §2.7 leaves the shape open).
type CatEntry struct {
	Name            string `json:"name"`
	ChatMode        string `json:"chat_mode" doc:"legacy, agent or custom."`
	AnalyticsPublic bool   `json:"analytics_public" doc:"Whether the CAT's analytics need no admin token."`
	RetentionDays   int    `json:"retention_days,omitempty" doc:"analytics.retention_days: interactions older than today and the N days before it are deleted; absent when they are kept forever."`
	ChatRetention   int    `json:"chat_retention_days,omitempty" doc:"chat.retention_days: conversations idle for more than N days are deleted; absent when they are kept forever."`
}

// TopicCount is one entry of topic_counts.
type TopicCount struct {
	Topic      string  `json:"topic"`
	Count      int64   `json:"count"`
	Percentage float64 `json:"percentage" doc:"Share of the topic list's total, x100, rounded to 2 decimals."`
}

// ModelCount is one entry of model_counts; the model name is in Membership,
// as the spec names it.
type ModelCount struct {
	Membership string `json:"membership" doc:"The model name."`
	Count      int64  `json:"count"`
}

// PersonaCount is one entry of persona_counts.
type PersonaCount struct {
	Persona string `json:"persona"`
	Count   int64  `json:"count"`
}

// QuestionEntry is one unique question with its count.
type QuestionEntry struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Count    int64  `json:"count"`
}

// AnswerEntry is one unique answer with its count; the text is in Answers,
// as the spec names it.
type AnswerEntry struct {
	ID      string `json:"id"`
	Answers string `json:"answers" doc:"The answer text."`
	Count   int64  `json:"count"`
}

// ResultBody converts the core's result, with every list a JSON array and
// the list totals when the query was paged.
func ResultBody(r analytics.Result, w analytics.Window) AnalyticsResult {
	out := resultBody(r)
	if w.Paged {
		out.QuestionsTotal, out.AnswersTotal = &r.QuestionsTotal, &r.AnswersTotal
	}
	return out
}

func resultBody(r analytics.Result) AnalyticsResult {
	return AnalyticsResult{
		TotalInteractions: r.TotalInteractions,
		TopicCounts:       topicCountList(r.TopicCounts),
		ModelCounts:       modelCountList(r.ModelCounts),
		PersonaCounts:     each(r.PersonaCounts, func(c analytics.PersonaCount) PersonaCount { return PersonaCount(c) }),
		Questions:         questionList(r.Questions),
		Answers:           answerList(r.Answers),
	}
}

func topicCountList(l []analytics.TopicCount) []TopicCount {
	return each(l, func(c analytics.TopicCount) TopicCount { return TopicCount(c) })
}

func modelCountList(l []analytics.ModelCount) []ModelCount {
	return each(l, func(c analytics.ModelCount) ModelCount { return ModelCount(c) })
}

// questionList and answerList give the core's lists as wire entries
// without copying them: a list without a limit holds hundreds of
// thousands of entries at 10M interactions, and a copy of it would hold
// megabytes more in every such request.
// Each reads the core's entries as wire entries: the wire entry is the
// core's with tags, and the conversion beside it compiles only while
// their fields are the same, so their memory is laid out the same. An
// empty list is an empty slice, which encodes as [] rather than null.
func questionList(l []analytics.QuestionEntry) []QuestionEntry {
	_ = QuestionEntry(analytics.QuestionEntry{}) // the same fields
	if len(l) == 0 {
		return []QuestionEntry{}
	}
	return unsafe.Slice((*QuestionEntry)(unsafe.Pointer(unsafe.SliceData(l))), len(l)) // #nosec G103 -- the same fields, so the same layout
}

func answerList(l []analytics.AnswerEntry) []AnswerEntry {
	_ = AnswerEntry(analytics.AnswerEntry{}) // the same fields
	if len(l) == 0 {
		return []AnswerEntry{}
	}
	return unsafe.Slice((*AnswerEntry)(unsafe.Pointer(unsafe.SliceData(l))), len(l)) // #nosec G103 -- the same fields, so the same layout
}

// each converts every element of a core list into its wire form; an empty
// list is an empty slice, which encodes as [] rather than null.
func each[C, W any](l []C, wire func(C) W) []W {
	out := make([]W, 0, len(l))
	for _, c := range l {
		out = append(out, wire(c))
	}
	return out
}

// rejectMalformedQuery answers 422 when the query string does not parse.
// huma reads single values with its own scanner but repeated ones through
// url.ParseQuery, which drops everything past an error (more than 10000
// parameters, a bad escape, a semicolon): a filter would then silently
// vanish and the caller get an unfiltered result.
func rejectMalformedQuery(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		u := ctx.URL()
		if _, err := url.ParseQuery(u.RawQuery); err != nil {
			_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "malformed query string",
				&huma.ErrorDetail{Location: "query", Message: "malformed query string: " + err.Error()})
			return
		}
		next(ctx)
	}
}

// The bodies with question and answer lists write themselves (JSON of
// tens of MB at 10M interactions without a limit), in their fields' order;
// TestStreamedBodies checks them against encoding/json.

// StreamJSON writes the result's fields.
func (r AnalyticsResult) StreamJSON(o *base.JSONObject) {
	o.Field("total_interactions", r.TotalInteractions)
	base.List(o, "topic_counts", r.TopicCounts)
	base.List(o, "model_counts", r.ModelCounts)
	base.List(o, "persona_counts", r.PersonaCounts)
	base.List(o, "questions", r.Questions)
	base.List(o, "answers", r.Answers)
	base.OmitEmptyPtr(o, "questions_total", r.QuestionsTotal)
	base.OmitEmptyPtr(o, "answers_total", r.AnswersTotal)
}

// StreamJSON writes the result's fields.
func (r WarehouseResult) StreamJSON(o *base.JSONObject) {
	r.AnalyticsResult.StreamJSON(o)
	o.Field("performance_ms", r.PerformanceMS)
	o.Field("data_source", r.DataSource)
}

// StreamJSON writes the result's fields.
func (r LegacyResult) StreamJSON(o *base.JSONObject) {
	r.AnalyticsResult.StreamJSON(o)
	o.Field("data_source", r.DataSource)
}

// StreamJSON writes the body's fields.
func (b QuestionsBody) StreamJSON(o *base.JSONObject) {
	base.List(o, "questions", b.Questions)
	base.OmitEmptyPtr(o, "total", b.Total)
}

// StreamJSON writes the body's fields.
func (b AnswersBody) StreamJSON(o *base.JSONObject) {
	base.List(o, "answers", b.Answers)
	base.OmitEmptyPtr(o, "total", b.Total)
}
