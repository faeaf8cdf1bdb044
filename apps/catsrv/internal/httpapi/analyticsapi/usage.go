package analyticsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/errs"
)

// maxReviewExport bounds a review queue's export.
const maxReviewExport = 1_000_000

// registerUsage adds /usage, /feedback and /review.
func registerUsage(api huma.API, s *routes) {
	op := func(id, path, summary, desc string) huma.Operation {
		return analyticsOperation(api, id, path, summary, desc, base.Security)
	}
	huma.Register(api, op("getUsage", "/usage", "Tokens, cost and latency",
		"What the selection's interactions took (every filter applied): tokens, cost and latency percentiles, "+
			"in total and per group_by group."), s.usage)
	huma.Register(api, op("getFeedback", "/feedback", "Ratings and satisfaction",
		"How the selection's answers were rated (every filter applied): up, down and satisfaction, "+
			"in total and per group_by group."), s.feedback)
	review := analyticsOperation(api, "getReview", "/review", "Review queue",
		"The answers rated down, or the questions left unanswered, newest first a page at a time; "+
			"format=jsonl exports the whole queue in the import format. Admin token always required.", adminOnly)
	review.Responses["200"] = &huma.Response{Description: "One page (JSON), or the whole queue (JSON Lines).",
		Content: map[string]*huma.MediaType{
			"application/json":     {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ReviewBody](), true, "ReviewBody")},
			"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString}},
		}}
	huma.Register(api, review, s.review)
}

// counts resolves a /usage or /feedback request and counts it.
func (s *routes) counts(ctx context.Context, in *usageInput, ratingsOnly bool) (analytics.UsageCounts, analytics.GroupBy, error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), 0)
	if err != nil {
		return analytics.UsageCounts{}, 0, err
	}
	g, err := analytics.ParseGroupBy(in.GroupBy)
	if err != nil {
		return analytics.UsageCounts{}, 0, base.AnalyticsError(ctx, s.log, err)
	}
	if s.usageCounter == nil {
		return analytics.UsageCounts{}, 0, base.AnalyticsError(ctx, s.log, errs.New(errs.KindUnavailable, "usage counts are not configured on this server"))
	}
	sel, ok := chatlog.Storable(q.Selection())
	if !ok {
		return analytics.UsageCounts{}, g, nil
	}
	c, err := s.usageCounter.CountUsage(ctx, analytics.UsageQuery{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters, GroupBy: g, RatingsOnly: ratingsOnly})
	if err != nil {
		if errs.KindOf(err) == errs.KindInternal {
			err = errs.Wrap(errs.KindInternal, err, "usage store failed")
		}
		return analytics.UsageCounts{}, 0, base.AnalyticsError(ctx, s.log, err)
	}
	return c, g, nil
}

func (s *routes) usage(ctx context.Context, in *usageInput) (*base.Body[UsageBody], error) {
	c, g, err := s.counts(ctx, in, false)
	if err != nil {
		return nil, err
	}
	out := UsageBody{UsageStatsBody: usageStatsBody(c.Total), Groups: []UsageGroupBody{}}
	for _, grp := range analytics.SortUsageGroups(c.Groups, g, in.Limit, func(u analytics.UsageStats) int64 { return u.Interactions }) {
		out.Groups = append(out.Groups, UsageGroupBody{Key: grp.Key, UsageStatsBody: usageStatsBody(grp.UsageStats)})
	}
	return &base.Body[UsageBody]{Body: out}, nil
}

func (s *routes) feedback(ctx context.Context, in *usageInput) (*base.Body[FeedbackBody], error) {
	c, g, err := s.counts(ctx, in, true)
	if err != nil {
		return nil, err
	}
	rated := c.Groups[:0:0]
	for _, grp := range c.Groups {
		if grp.Up+grp.Down > 0 {
			rated = append(rated, grp)
		}
	}
	out := FeedbackBody{Up: c.Total.Up, Down: c.Total.Down, Satisfaction: satisfaction(c.Total), Groups: []FeedbackGroupBody{}}
	for _, grp := range analytics.SortUsageGroups(rated, g, in.Limit, func(u analytics.UsageStats) int64 { return u.Up + u.Down }) {
		out.Groups = append(out.Groups, FeedbackGroupBody{Key: grp.Key, Up: grp.Up, Down: grp.Down, Satisfaction: satisfaction(grp.UsageStats)})
	}
	return &base.Body[FeedbackBody]{Body: out}, nil
}

// reviewOutput is a page of the review queue, or its export.
type reviewOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               func(huma.Context)
}

func (s *routes) review(ctx context.Context, in *reviewInput) (*reviewOutput, error) {
	after, err := chatlog.DecodeCursor(in.Cursor)
	if err != nil {
		return nil, huma.Error422UnprocessableEntity("invalid cursor",
			&huma.ErrorDetail{Location: "query.cursor", Message: "invalid cursor: pass a next_cursor back unchanged"})
	}
	q, cat, err := s.reporter.Resolve(ctx, reporter.Request{Cat: in.Cat, StartDate: in.StartDate, EndDate: in.EndDate, Filters: in.filters()})
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	if err := base.RequireAdmin(ctx); err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	rv := chatlog.Review{Kind: in.Kind, DefaultAnswer: cat.Chat.Legacy.DefaultAnswer}
	if in.Format == formatJSONL {
		rows := s.browse.Export(ctx, q, after, maxReviewExport, rv)
		return &reviewOutput{
			ContentType:        "application/x-ndjson",
			ContentDisposition: fmt.Sprintf(`attachment; filename="%s"`, exportFilename(q, "review_"+in.Kind+".jsonl")),
			Body: func(hctx huma.Context) {
				hctx.SetStatus(http.StatusOK)
				if err := writeJSONL(hctx.BodyWriter(), q.Cat, rows); err != nil {
					_ = base.AnalyticsError(ctx, s.log, errs.Wrap(errs.KindInternal, err, "review export failed"))
				}
			},
		}, nil
	}
	l, err := s.browse.List(ctx, q, chatlog.Page{After: after, Limit: in.Limit, Review: rv})
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := ReviewBody{Entries: make([]ReviewEntry, 0, len(l.Entries)), NextCursor: chatlog.EncodeCursor(l.Next)}
	for _, e := range l.Entries {
		out.Entries = append(out.Entries, reviewEntry(e))
	}
	return &reviewOutput{ContentType: "application/json", Body: func(hctx huma.Context) {
		hctx.SetStatus(http.StatusOK)
		if err := json.NewEncoder(hctx.BodyWriter()).Encode(out); err != nil {
			_ = base.AnalyticsError(ctx, s.log, errs.Wrap(errs.KindInternal, err, "review write failed"))
		}
	}}, nil
}
