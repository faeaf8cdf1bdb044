// Package reporter answers catsrv's analytics questions: it validates a
// request against the CAT directory, then builds results from the counts of
// the raw interaction log or of the rollups, applying the selective
// filtering rule of the analytics model.
package reporter

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Reporter answers analytics queries.
type Reporter struct {
	cats    ports.CatDirectory
	raw     ports.Aggregator
	rollups ports.Aggregator
	clock   ports.Clock
}

// New returns a reporter reading CATs from cats, raw counts from log and
// pre-aggregated counts from rollups.
func New(cats ports.CatDirectory, log ports.InteractionLog, rollups ports.RollupStore, clock ports.Clock) *Reporter {
	return &Reporter{cats: cats, raw: log, rollups: rollups, clock: clock}
}

// Request is an analytics request as a caller states it: dates as
// YYYY-MM-DD strings, each optional.
type Request struct {
	Cat       string
	StartDate string
	EndDate   string
	Filters   analytics.Filters
	Limit     int
}

// maxEchoedName bounds how much of an unknown CAT name an error repeats.
const maxEchoedName = 64

// Resolve validates a request and returns its query and the CAT's
// configuration. An unknown CAT is errs.KindNotFound; bad dates and a start
// not before the end are errs.KindInvalid, with the spec's messages.
func (r *Reporter) Resolve(ctx context.Context, req Request) (analytics.Query, catconfig.Cat, error) {
	cat, err := r.cats.Cat(ctx, req.Cat)
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound {
			name := req.Cat
			if len(name) > maxEchoedName {
				name = name[:maxEchoedName] + "..."
			}
			return analytics.Query{}, catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found in configuration", name)
		}
		return analytics.Query{}, catconfig.Cat{}, err
	}
	rng, err := analytics.ParseRange(req.StartDate, req.EndDate)
	if err != nil {
		return analytics.Query{}, catconfig.Cat{}, err
	}
	if req.Limit < 0 {
		return analytics.Query{}, catconfig.Cat{}, errs.New(errs.KindInvalid, "limit must not be negative")
	}
	return analytics.Query{Cat: cat.Name, Range: rng, Filters: req.Filters, Limit: req.Limit}, cat, nil
}

// All computes the full result from the raw interaction log.
func (r *Reporter) All(ctx context.Context, q analytics.Query) (analytics.Result, error) {
	return r.result(ctx, r.raw, q)
}

// Warehouse computes the full result from the rollups and reports how long
// it took, in milliseconds.
func (r *Reporter) Warehouse(ctx context.Context, q analytics.Query) (analytics.Result, float64, error) {
	start := r.clock.Now()
	res, err := r.result(ctx, r.rollups, q)
	elapsed := r.clock.Now().Sub(start)
	return res, float64(elapsed.Microseconds()) / 1000, err
}

// TotalInteractions counts the query's interactions (filters applied).
func (r *Reporter) TotalInteractions(ctx context.Context, q analytics.Query) (int64, error) {
	return r.total(ctx, r.rollups, q.Selection())
}

// TopicCounts returns the query's topic distribution.
func (r *Reporter) TopicCounts(ctx context.Context, q analytics.Query) ([]analytics.TopicCount, error) {
	g, err := r.groups(ctx, r.rollups, q, analytics.Topic)
	return analytics.TopicCounts(g), err
}

// ModelCounts returns the query's model usage.
func (r *Reporter) ModelCounts(ctx context.Context, q analytics.Query) ([]analytics.ModelCount, error) {
	g, err := r.groups(ctx, r.rollups, q, analytics.Model)
	return analytics.ModelCounts(g), err
}

// Questions returns the query's unique questions with counts.
func (r *Reporter) Questions(ctx context.Context, q analytics.Query) ([]analytics.QuestionEntry, error) {
	g, err := r.groups(ctx, r.rollups, q, analytics.Question)
	return analytics.QuestionEntries(g, q.Limit), err
}

// Answers returns the query's unique answers with counts.
func (r *Reporter) Answers(ctx context.Context, q analytics.Query) ([]analytics.AnswerEntry, error) {
	g, err := r.groups(ctx, r.rollups, q, analytics.Answer)
	return analytics.AnswerEntries(g, q.Limit), err
}

// Cats lists the configured CATs.
func (r *Reporter) Cats(ctx context.Context) ([]catconfig.Cat, error) {
	return r.cats.Cats(ctx)
}

// result counts the total and every list of the query, all from one
// state of the store's rows when it can hold one (so a write another
// process commits meanwhile is in all of them or none).
func (r *Reporter) result(ctx context.Context, src ports.Aggregator, q analytics.Query) (analytics.Result, error) {
	if snap, ok := src.(ports.SnapshotAggregator); ok {
		var release func()
		ctx, release = snap.Snapshot(ctx)
		defer release()
	}
	c := analytics.Counts{Groups: make(map[analytics.Dimension][]analytics.Group, len(analytics.Dimensions))}
	var err error
	if c.Total, err = r.total(ctx, src, q.Selection()); err != nil {
		return analytics.Result{}, err
	}
	for _, d := range analytics.Dimensions {
		if c.Groups[d], err = r.groups(ctx, src, q, d); err != nil {
			return analytics.Result{}, err
		}
	}
	return analytics.Assemble(c, q.Limit), nil
}

func (r *Reporter) total(ctx context.Context, src ports.Aggregator, s analytics.Selection) (int64, error) {
	s, ok := storableOnly(s)
	if !ok {
		return 0, nil
	}
	n, err := src.Total(ctx, s)
	if err != nil {
		return 0, wrapStore(err)
	}
	return n, nil
}

func (r *Reporter) groups(ctx context.Context, src ports.Aggregator, q analytics.Query, d analytics.Dimension) ([]analytics.Group, error) {
	s, ok := storableOnly(q.SelectionFor(d))
	if !ok {
		return nil, nil
	}
	var g []analytics.Group
	var err error
	if top, ok := src.(ports.TopAggregator); ok && q.Limit > 0 && (d == analytics.Question || d == analytics.Answer) {
		g, err = top.TopGroups(ctx, s, d, q.Limit)
	} else {
		g, err = src.Groups(ctx, s, d)
	}
	if err != nil {
		return nil, wrapStore(err)
	}
	return g, nil
}

// storableOnly drops the filter values that could never have been stored
// (NUL bytes, invalid UTF-8, oversized): they match nothing, and no back end
// needs to see them (PostgreSQL rejects NUL bytes outright). It reports
// false when a filter loses all its values, so the selection matches
// nothing at all.
func storableOnly(s analytics.Selection) (analytics.Selection, bool) {
	lists := map[analytics.Dimension]*[]string{
		analytics.Topic: &s.Filters.Topics, analytics.Model: &s.Filters.Models, analytics.Persona: &s.Filters.Personas,
		analytics.Question: &s.Filters.QuestionIDs, analytics.Answer: &s.Filters.AnswerIDs,
	}
	for d, values := range lists {
		if len(*values) == 0 {
			continue
		}
		kept := make([]string, 0, len(*values))
		for _, v := range *values {
			if analytics.CheckText(d.String(), v) == nil {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			return s, false
		}
		*values = kept
	}
	return s, true
}

func wrapStore(err error) error {
	if errs.KindOf(err) != errs.KindInternal {
		return err
	}
	return errs.Wrap(errs.KindInternal, err, "analytics store failed")
}
