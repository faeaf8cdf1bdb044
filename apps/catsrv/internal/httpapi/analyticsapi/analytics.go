// Package analyticsapi is the analytics part of catsrv's HTTP app: the
// routes under /api/v1/analytics (the aggregates, the chat log, its export
// and the daily series, and the ingestion of interactions) and their wire
// models.
package analyticsapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/browse"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/ports"
)

// Prefix is the path every analytics route starts with.
const Prefix = base.AnalyticsPrefix

// tagAnalytics groups the analytics operations in the document.
const tagAnalytics = "analytics"

// Deps are what the analytics routes need.
type Deps struct {
	Reporter *reporter.Reporter
	// Browser reads the chat log for /interactions and /daily_counts;
	// those routes answer 500 without it.
	Browser ports.InteractionBrowser
	// Logger receives the causes of internal errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Log stores what POST /interactions ingests, all or nothing, and
	// tells every analytics route at once (serve's store tells the
	// column index of each commit, colindex.Index.Hold); nil answers that
	// route 503.
	Log ports.InteractionLog
	// Usage counts /usage and /feedback (the column index, or the store
	// itself); nil answers those routes 503.
	Usage ports.UsageCounter
	// Ingest bounds one ingested batch; zero fields take the defaults.
	Ingest IngestLimits
	// WholeLists is how many /all and /all_legacy requests with whole
	// question and answer lists are answered at once (see wholeListTurn);
	// 0 means one. WholeListWait is how long the others wait for a turn;
	// 0 means DefaultWholeListWait.
	WholeLists    int
	WholeListWait time.Duration
}

// routes holds the dependencies the handlers share.
type routes struct {
	reporter  *reporter.Reporter
	browse    *browse.Service
	log       *slog.Logger
	ingestLog ports.InteractionLog
	limits    IngestLimits
	// usageCounter counts /usage and /feedback.
	usageCounter ports.UsageCounter
	// wholeLists holds a token per raw answer with whole lists in
	// progress; wholeListWait bounds the wait for one.
	wholeLists    chan struct{}
	wholeListWait time.Duration
}

// Register adds the analytics routes and their tag to api.
func Register(api huma.API, d Deps) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	api.OpenAPI().Tags = append(api.OpenAPI().Tags, &huma.Tag{Name: tagAnalytics, Description: "Aggregates over a CAT's logged interactions."})
	limits := d.Ingest
	if limits.MaxBytes <= 0 {
		limits.MaxBytes = DefaultIngestMaxBytes
	}
	if limits.MaxLines <= 0 {
		limits.MaxLines = DefaultIngestMaxLines
	}
	s := &routes{reporter: d.Reporter, browse: browse.New(d.Browser), log: log, ingestLog: d.Log, limits: limits, usageCounter: d.Usage,
		wholeLists: make(chan struct{}, max(d.WholeLists, 1)), wholeListWait: d.WholeListWait}
	if s.wholeListWait <= 0 {
		s.wholeListWait = DefaultWholeListWait
	}
	// Every route refuses a malformed query string, then finds its caller.
	g := huma.NewGroup(api, Prefix)
	g.UseMiddleware(rejectMalformedQuery(api), base.Authenticate)
	registerAnalytics(g, s)
	registerInteractions(g, s)
	registerIngest(g, s)
	registerUsage(g, s)
}

// analyticsOperation describes one GET route of the group under Prefix:
// the shared tag and error responses, with the given security.
func analyticsOperation(api huma.API, id, path, summary, desc string, sec []map[string][]string) huma.Operation {
	return huma.Operation{
		OperationID: id,
		Method:      http.MethodGet,
		Path:        path,
		Summary:     summary,
		Description: desc,
		Tags:        []string{tagAnalytics},
		Security:    sec,
		// A map of its own per operation: huma adds the 200 to it.
		Responses: errorResponses(api, http.StatusUnauthorized, http.StatusForbidden,
			http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable),
	}
}

// registerAnalytics adds the nine analytics routes.
func registerAnalytics(api huma.API, s *routes) {
	op := func(id, path, summary, desc string) huma.Operation {
		return analyticsOperation(api, id, path, summary, desc, base.Security)
	}
	huma.Register(api, op("getAllWarehouse", "/all_warehouse", "Full analytics from the rollups",
		"The analytics result computed from the pre-aggregated rollups, with performance_ms and data_source warehouse. "+
			"A drop-in replacement for /all."), s.allWarehouse)
	// The raw routes take turns for whole lists.
	raw := huma.NewGroup(api)
	raw.UseMiddleware(s.wholeListTurn(api))
	huma.Register(raw, op("getAll", "/all", "Full analytics from the raw log",
		"The analytics result computed from the raw interaction log. "+
			"Requests for whole question and answer lists (no limit, or offset or q) are answered a few at a time "+
			"(CATSRV_RAW_WHOLE_LISTS, one by default); the others wait their turn, 503 after a minute."), s.all)
	huma.Register(raw, op("getAllLegacy", "/all_legacy", "Full analytics from the raw log (legacy route)",
		"Same as /all, plus data_source legacy."), s.allLegacy)
	huma.Register(api, op("getTopicCounts", "/metrics/topic_counts", "Topic distribution",
		"How many interactions each topic has, with its share of the total."), s.topicCounts)
	huma.Register(api, op("getModelCounts", "/metrics/model_counts", "Model usage",
		"How many interactions each model answered."), s.modelCounts)
	huma.Register(api, op("getTotalInteractions", "/metrics/total_interactions", "Interaction count",
		"How many interactions the CAT had in the range."), s.totalInteractions)
	huma.Register(api, op("getQuestions", "/questions", "Unique questions",
		"Each distinct question with its id and count, most asked first. "+
			"Optional (not in the spec): the /all filters, and offset and q to page and search the list, which add its total."), s.questions)
	huma.Register(api, op("getAnswers", "/answers", "Unique answers",
		"Each distinct answer with its id and count, most given first. "+
			"Optional (not in the spec): the /all filters, and offset and q to page and search the list, which add its total."), s.answers)

	cats := op("getCats", "/get_cats", "Configured CATs",
		"Every configured CAT for an admin token; without one, only the CATs whose analytics are public. "+
			"A token that does not verify is refused.")
	cats.Responses = errorResponses(api, http.StatusUnauthorized, http.StatusUnprocessableEntity, http.StatusInternalServerError)
	huma.Register(api, cats, s.cats)
}

// query validates a request and checks that the caller may read the CAT.
// The CAT is resolved first, so an unknown CAT or a bad date gets the
// spec's error whoever asks.
func (s *routes) query(ctx context.Context, p CommonParams, f analytics.Filters, limit int, w ...analytics.Window) (analytics.Query, error) {
	req := reporter.Request{Cat: p.Cat, StartDate: p.StartDate, EndDate: p.EndDate, Filters: f, Limit: limit}
	if len(w) > 0 {
		req.Window = w[0]
	}
	q, cat, err := s.reporter.Resolve(ctx, req)
	if err != nil {
		return analytics.Query{}, base.AnalyticsError(ctx, s.log, err)
	}
	who, whoErr := base.CallerOf(ctx)
	if err := auth.MayReadAnalytics(cat.Security.Analytics.Public, who, whoErr); err != nil {
		return analytics.Query{}, base.AnalyticsError(ctx, s.log, err)
	}
	return q, nil
}

func (s *routes) allWarehouse(ctx context.Context, in *fullInput) (*base.Body[WarehouseResult], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit, in.window())
	if err != nil {
		return nil, err
	}
	res, ms, err := s.reporter.Warehouse(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	return &base.Body[WarehouseResult]{Body: WarehouseResult{AnalyticsResult: ResultBody(res, q.Window), PerformanceMS: ms, DataSource: "warehouse"}}, nil
}

func (s *routes) all(ctx context.Context, in *fullInput) (*base.Body[AnalyticsResult], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit, in.window())
	if err != nil {
		return nil, err
	}
	res, err := s.reporter.All(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	return &base.Body[AnalyticsResult]{Body: ResultBody(res, q.Window)}, nil
}

func (s *routes) allLegacy(ctx context.Context, in *fullInput) (*base.Body[LegacyResult], error) {
	out, err := s.all(ctx, in)
	if err != nil {
		return nil, err
	}
	return &base.Body[LegacyResult]{Body: LegacyResult{AnalyticsResult: out.Body, DataSource: "legacy"}}, nil
}

func (s *routes) topicCounts(ctx context.Context, in *countInput) (*base.Body[TopicCountsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.TopicCounts(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	return &base.Body[TopicCountsBody]{Body: TopicCountsBody{topicCountList(list)}}, nil
}

func (s *routes) modelCounts(ctx context.Context, in *countInput) (*base.Body[ModelCountsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	list, err := s.reporter.ModelCounts(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	return &base.Body[ModelCountsBody]{Body: ModelCountsBody{modelCountList(list)}}, nil
}

func (s *routes) totalInteractions(ctx context.Context, in *countInput) (*base.Body[TotalInteractionsBody], error) {
	q, err := s.query(ctx, in.CommonParams, analytics.Filters{}, 0)
	if err != nil {
		return nil, err
	}
	n, err := s.reporter.TotalInteractions(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	return &base.Body[TotalInteractionsBody]{Body: TotalInteractionsBody{n}}, nil
}

func (s *routes) questions(ctx context.Context, in *listInput) (*base.Body[QuestionsBody], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit, in.window())
	if err != nil {
		return nil, err
	}
	list, total, err := s.reporter.Questions(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := QuestionsBody{Questions: questionList(list)}
	if q.Window.Paged {
		out.Total = &total
	}
	return &base.Body[QuestionsBody]{Body: out}, nil
}

func (s *routes) answers(ctx context.Context, in *listInput) (*base.Body[AnswersBody], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), in.Limit, in.window())
	if err != nil {
		return nil, err
	}
	list, total, err := s.reporter.Answers(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := AnswersBody{Answers: answerList(list)}
	if q.Window.Paged {
		out.Total = &total
	}
	return &base.Body[AnswersBody]{Body: out}, nil
}

// cats lists every CAT to an admin and only the public ones to anyone else,
// so that an anonymous caller learns nothing about private CATs. A token
// that does not verify is refused (401), as on the other analytics routes:
// taking it for no token would hide an expired or mistyped one.
func (s *routes) cats(ctx context.Context, _ *struct{}) (*base.Body[CatsBody], error) {
	who, whoErr := base.CallerOf(ctx)
	if whoErr != nil && !errors.Is(whoErr, auth.ErrNoCredentials) {
		return nil, base.AnalyticsError(ctx, s.log, whoErr)
	}
	all, err := s.reporter.Cats(ctx)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := CatsBody{Cats: []CatEntry{}}
	for _, c := range all {
		if auth.MayReadAnalytics(c.Security.Analytics.Public, who, whoErr) == nil {
			out.Cats = append(out.Cats, CatEntry{Name: c.Name, ChatMode: c.Chat.ChatMode, AnalyticsPublic: c.Security.Analytics.Public,
				RetentionDays: c.Analytics.RetentionDays, ChatRetention: c.ChatLog.RetentionDays})
		}
	}
	return &base.Body[CatsBody]{Body: out}, nil
}

// analyticsErrors are the error responses of the analytics routes.
var analyticsErrors = map[int]base.ErrorDoc{
	http.StatusUnauthorized: {Description: "The CAT is not public and the request has no valid bearer token.", Shape: base.PlainError},
	http.StatusForbidden:    {Description: "The bearer token is valid but its role is not admin.", Shape: base.PlainError},
	http.StatusUnprocessableEntity: {Description: "A parameter is missing or invalid, or the query string is malformed; " +
		"the body lists each problem.", Shape: base.InvalidRequest},
	http.StatusInternalServerError: {Description: "Error " + base.AnalyticsErrorCode + ": the CAT is not configured, a date is not YYYY-MM-DD, " +
		"startDate is not before endDate, or the analytics store failed.", Shape: base.PlainError},
	http.StatusServiceUnavailable: {Description: "Error " + base.AnalyticsErrorCode + ": the database is unreachable for now; " +
		"try again after Retry-After seconds.", Shape: base.PlainError},
}

// errorResponses documents the error responses of an analytics route.
func errorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	return base.DocumentErrors(api, analyticsErrors, statuses...)
}
