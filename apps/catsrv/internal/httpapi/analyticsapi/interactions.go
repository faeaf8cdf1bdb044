package analyticsapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/errs"
)

// adminOnly is the security of routes that need an admin token whatever
// the CAT's configuration: they expose raw chat logs.
var adminOnly = []map[string][]string{{base.BearerScheme: {}}}

// registerInteractions adds the chat-log routes: the listing, its export
// and the daily series.
func registerInteractions(api huma.API, s *routes) {
	op := func(id, path, summary, desc string, sec []map[string][]string) huma.Operation {
		o := analyticsOperation(api, id, path, summary, desc, sec)
		if len(sec) == len(adminOnly) {
			unauthorized := *o.Responses["401"]
			unauthorized.Description = "The request has no valid bearer token (required whatever the CAT's configuration)."
			o.Responses["401"] = &unauthorized
		}
		return o
	}
	huma.Register(api, op("listInteractions", "/interactions", "Chat log",
		"The interactions behind a selection (same parameters and filters as /all, every filter applied), "+
			"newest first, a page at a time. Admin token always required, even for public CATs.", adminOnly), s.listInteractions)

	export := op("exportInteractions", "/interactions/export", "Chat log export",
		"The interactions of /interactions as one streamed download, newest first: CSV (cells that a spreadsheet "+
			"would run as a formula are prefixed with a quote) or JSON Lines in the import format. "+
			"Admin token always required.", adminOnly)
	export.Responses["200"] = &huma.Response{
		Description: "The export; X-Total-Count and X-Export-Truncated say whether it is whole.",
		Content: map[string]*huma.MediaType{
			"text/csv":             {Schema: &huma.Schema{Type: huma.TypeString}},
			"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString}},
		},
		Headers: map[string]*huma.Header{
			"X-Total-Count":      {Description: "How many interactions the selection has.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			"X-Export-Truncated": {Description: "true when the export stops at limit.", Schema: &huma.Schema{Type: huma.TypeBoolean}},
		},
	}
	huma.Register(api, export, s.exportInteractions)

	huma.Register(api, op("getDailyCounts", "/daily_counts", "Interactions per day",
		"How many interactions of the selection (every filter applied) fall on each UTC day; "+
			"they sum to total_interactions.", base.Security), s.dailyCounts)
}

// chatLogQuery validates a chat-log request: the CAT and dates first, as
// every analytics route does, then an admin token, whatever the CAT's
// configuration says.
func (s *routes) chatLogQuery(ctx context.Context, p CommonParams, f FilterParams) (analytics.Query, error) {
	q, _, err := s.reporter.Resolve(ctx, reporter.Request{Cat: p.Cat, StartDate: p.StartDate, EndDate: p.EndDate, Filters: f.filters()})
	if err != nil {
		return analytics.Query{}, base.AnalyticsError(ctx, s.log, err)
	}
	if err := base.RequireAdmin(ctx); err != nil {
		return analytics.Query{}, base.AnalyticsError(ctx, s.log, err)
	}
	return q, nil
}

func (s *routes) listInteractions(ctx context.Context, in *interactionsInput) (*base.Body[InteractionsBody], error) {
	after, err := chatlog.DecodeCursor(in.Cursor)
	if err != nil {
		return nil, huma.Error422UnprocessableEntity("invalid cursor",
			&huma.ErrorDetail{Location: "query.cursor", Message: "invalid cursor: pass a next_cursor back unchanged"})
	}
	q, err := s.chatLogQuery(ctx, in.CommonParams, in.FilterParams)
	if err != nil {
		return nil, err
	}
	l, err := s.browse.List(ctx, q, chatlog.Page{After: after, Limit: in.Limit})
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := InteractionsBody{Interactions: make([]InteractionEntry, 0, len(l.Entries)), NextCursor: chatlog.EncodeCursor(l.Next)}
	for _, e := range l.Entries {
		out.Interactions = append(out.Interactions, entryBody(e))
	}
	return &base.Body[InteractionsBody]{Body: out}, nil
}

func (s *routes) dailyCounts(ctx context.Context, in *dailyInput) (*base.Body[DailyCountsBody], error) {
	q, err := s.query(ctx, in.CommonParams, in.filters(), 0)
	if err != nil {
		return nil, err
	}
	days, err := s.browse.Daily(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	out := DailyCountsBody{DailyCounts: make([]DayCountEntry, 0, len(days))}
	for _, d := range days {
		out.DailyCounts = append(out.DailyCounts, DayCountEntry{Date: d.Day.Format(analytics.DateLayout), Count: d.Count})
	}
	return &base.Body[DailyCountsBody]{Body: out}, nil
}

func (s *routes) exportInteractions(ctx context.Context, in *exportInput) (*exportOutput, error) {
	q, err := s.chatLogQuery(ctx, in.CommonParams, in.FilterParams)
	if err != nil {
		return nil, err
	}
	total, err := s.reporter.TotalInteractions(ctx, q)
	if err != nil {
		return nil, base.AnalyticsError(ctx, s.log, err)
	}
	ext, contentType := "csv", "text/csv; charset=utf-8"
	if in.Format == formatJSONL {
		ext, contentType = "jsonl", "application/x-ndjson"
	}
	out := &exportOutput{
		ContentType:        contentType,
		ContentDisposition: fmt.Sprintf(`attachment; filename="%s"`, exportFilename(q, ext)),
		TotalCount:         total,
		Truncated:          total > int64(in.Limit),
	}
	rows := s.browse.Export(ctx, q, chatlog.Position{}, in.Limit)
	out.Body = func(hctx huma.Context) {
		hctx.SetStatus(http.StatusOK)
		w := hctx.BodyWriter()
		var err error
		if in.Format == formatJSONL {
			err = writeJSONL(w, q.Cat, rows)
		} else {
			err = writeCSV(w, rows)
		}
		if err != nil {
			// The status is sent: all that is left is to log and stop.
			_ = base.AnalyticsError(ctx, s.log, errs.Wrap(errs.KindInternal, err, "export failed"))
		}
	}
	return out, nil
}

// exportFilename names a download after the CAT and the range, keeping
// only characters that need no quoting in a header.
func exportFilename(q analytics.Query, ext string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, q.Cat)
	for _, b := range []time.Time{q.Range.Start, q.Range.End} {
		if !b.IsZero() {
			name += "_" + b.Format(analytics.DateLayout)
		}
	}
	return name + "_interactions." + ext
}
