package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
)

// analyticsOperation describes one GET route under AnalyticsPrefix: the
// shared tag, error responses and middlewares, with the given security.
func analyticsOperation(api huma.API, id, path, summary, desc string, sec []map[string][]string) huma.Operation {
	return huma.Operation{
		OperationID: id,
		Method:      http.MethodGet,
		Path:        AnalyticsPrefix + path,
		Summary:     summary,
		Description: desc,
		Tags:        []string{tagAnalytics},
		Security:    sec,
		// A map of its own per operation: huma adds the 200 to it.
		Responses: errorResponses(api, http.StatusUnauthorized, http.StatusForbidden,
			http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable),
		Middlewares: huma.Middlewares{rejectMalformedQuery(api), authenticate},
	}
}

// registerAnalytics adds the nine analytics routes.
func registerAnalytics(api huma.API, s *server) {
	op := func(id, path, summary, desc string) huma.Operation {
		return analyticsOperation(api, id, path, summary, desc, security)
	}
	huma.Register(api, op("getAllWarehouse", "/all_warehouse", "Full analytics from the rollups",
		"The analytics result computed from the pre-aggregated rollups, with performance_ms and data_source warehouse. "+
			"A drop-in replacement for /all."), s.allWarehouse)
	huma.Register(api, op("getAll", "/all", "Full analytics from the raw log",
		"The analytics result computed from the raw interaction log."), s.all)
	huma.Register(api, op("getAllLegacy", "/all_legacy", "Full analytics from the raw log (legacy route)",
		"Same as /all, plus data_source legacy."), s.allLegacy)
	huma.Register(api, op("getTopicCounts", "/metrics/topic_counts", "Topic distribution",
		"How many interactions each topic has, with its share of the total."), s.topicCounts)
	huma.Register(api, op("getModelCounts", "/metrics/model_counts", "Model usage",
		"How many interactions each model answered."), s.modelCounts)
	huma.Register(api, op("getTotalInteractions", "/metrics/total_interactions", "Interaction count",
		"How many interactions the CAT had in the range."), s.totalInteractions)
	huma.Register(api, op("getQuestions", "/questions", "Unique questions",
		"Each distinct question with its id and count, most asked first."), s.questions)
	huma.Register(api, op("getAnswers", "/answers", "Unique answers",
		"Each distinct answer with its id and count, most given first."), s.answers)

	cats := op("getCats", "/get_cats", "Configured CATs",
		"Every configured CAT for an admin token; without one, only the CATs whose analytics are public.")
	cats.Responses = errorResponses(api, http.StatusUnprocessableEntity, http.StatusInternalServerError)
	huma.Register(api, cats, s.cats)
}

// query validates a request and checks that the caller may read the CAT.
// The CAT is resolved first, so an unknown CAT or a bad date gets the
// spec's error whoever asks.
func (s *server) query(ctx context.Context, p CommonParams, f analytics.Filters, limit int) (analytics.Query, error) {
	q, cat, err := s.reporter.Resolve(ctx, reporter.Request{
		Cat: p.Cat, StartDate: p.StartDate, EndDate: p.EndDate, Filters: f, Limit: limit,
	})
	if err != nil {
		return analytics.Query{}, s.fail(ctx, err)
	}
	who, whoErr := callerOf(ctx)
	if err := auth.MayReadAnalytics(cat.Security.Analytics.Public, who, whoErr); err != nil {
		return analytics.Query{}, s.fail(ctx, err)
	}
	return q, nil
}

// fail turns a core error into the response of the error table.
func (s *server) fail(ctx context.Context, err error) error { return toHTTP(ctx, s.log, err) }

func (s *server) allWarehouse(ctx context.Context, in *fullInput) (*body[WarehouseResult], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit)
	if err != nil {
		return nil, err
	}
	res, ms, err := s.reporter.Warehouse(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[WarehouseResult]{WarehouseResult{AnalyticsResult: resultBody(res), PerformanceMS: ms, DataSource: "warehouse"}}, nil
}

func (s *server) all(ctx context.Context, in *fullInput) (*body[AnalyticsResult], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit)
	if err != nil {
		return nil, err
	}
	res, err := s.reporter.All(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[AnalyticsResult]{resultBody(res)}, nil
}

func (s *server) allLegacy(ctx context.Context, in *fullInput) (*body[LegacyResult], error) {
	out, err := s.all(ctx, in)
	if err != nil {
		return nil, err
	}
	return &body[LegacyResult]{LegacyResult{AnalyticsResult: out.Body, DataSource: "legacy"}}, nil
}

func (s *server) topicCounts(ctx context.Context, in *countInput) (*body[TopicCountsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.TopicCounts(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[TopicCountsBody]{TopicCountsBody{nonNil(list)}}, nil
}

func (s *server) modelCounts(ctx context.Context, in *countInput) (*body[ModelCountsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.ModelCounts(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[ModelCountsBody]{ModelCountsBody{nonNil(list)}}, nil
}

func (s *server) totalInteractions(ctx context.Context, in *countInput) (*body[TotalInteractionsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	n, err := s.reporter.TotalInteractions(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[TotalInteractionsBody]{TotalInteractionsBody{n}}, nil
}

func (s *server) questions(ctx context.Context, in *listInput) (*body[QuestionsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, in.Limit)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.Questions(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[QuestionsBody]{QuestionsBody{nonNil(list)}}, nil
}

func (s *server) answers(ctx context.Context, in *listInput) (*body[AnswersBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, in.Limit)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.Answers(ctx, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &body[AnswersBody]{AnswersBody{nonNil(list)}}, nil
}

// cats lists every CAT to an admin and only the public ones to anyone else,
// so that an anonymous caller learns nothing about private CATs. A bad
// token is not an error here: it just is not an admin's.
func (s *server) cats(ctx context.Context, _ *struct{}) (*body[CatsBody], error) {
	all, err := s.reporter.Cats(ctx)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	who, whoErr := callerOf(ctx)
	out := CatsBody{Cats: []CatEntry{}}
	for _, c := range all {
		if auth.MayReadAnalytics(c.Security.Analytics.Public, who, whoErr) == nil {
			out.Cats = append(out.Cats, CatEntry{Name: c.Name, ChatMode: c.Chat.ChatMode, AnalyticsPublic: c.Security.Analytics.Public})
		}
	}
	return &body[CatsBody]{out}, nil
}
