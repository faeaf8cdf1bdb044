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
	// Window pages and searches the question and answer lists.
	Window analytics.Window
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
	if req.Window.Offset < 0 {
		return analytics.Query{}, catconfig.Cat{}, errs.New(errs.KindInvalid, "offset must not be negative")
	}
	return analytics.Query{Cat: cat.Name, Range: rng, Filters: req.Filters, Limit: req.Limit, Window: req.Window}, cat, nil
}

// All computes the full result from the raw interaction log.
func (r *Reporter) All(ctx context.Context, q analytics.Query) (analytics.Result, error) {
	c, err := r.answer(ctx, r.raw, q, analytics.AllParts)
	if err != nil {
		return analytics.Result{}, err
	}
	return analytics.AssembleQuery(c, q), nil
}

// Warehouse computes the full result from the rollups and reports how long
// it took, in milliseconds.
func (r *Reporter) Warehouse(ctx context.Context, q analytics.Query) (analytics.Result, float64, error) {
	start := r.clock.Now()
	c, err := r.answer(ctx, r.rollups, q, analytics.AllParts)
	var res analytics.Result
	if err == nil {
		res = analytics.AssembleQuery(c, q)
	}
	elapsed := r.clock.Now().Sub(start)
	return res, float64(elapsed.Microseconds()) / 1000, err
}

// TotalInteractions counts the query's interactions (filters applied).
func (r *Reporter) TotalInteractions(ctx context.Context, q analytics.Query) (int64, error) {
	c, err := r.answer(ctx, r.rollups, q, analytics.PartTotal)
	return c.Total, err
}

// TopicCounts returns the query's topic distribution.
func (r *Reporter) TopicCounts(ctx context.Context, q analytics.Query) ([]analytics.TopicCount, error) {
	g, err := r.list(ctx, q, analytics.Topic)
	return analytics.TopicCounts(g), err
}

// ModelCounts returns the query's model usage.
func (r *Reporter) ModelCounts(ctx context.Context, q analytics.Query) ([]analytics.ModelCount, error) {
	g, err := r.list(ctx, q, analytics.Model)
	return analytics.ModelCounts(g), err
}

// Questions returns the query's unique questions with counts and, for a
// paged query, how many matched its search (0 otherwise).
func (r *Reporter) Questions(ctx context.Context, q analytics.Query) ([]analytics.QuestionEntry, int64, error) {
	g, total, err := r.page(ctx, q, analytics.Question)
	return analytics.QuestionEntries(g, q.Limit), total, err
}

// Answers returns the query's unique answers with counts and, for a paged
// query, how many matched its search (0 otherwise).
func (r *Reporter) Answers(ctx context.Context, q analytics.Query) ([]analytics.AnswerEntry, int64, error) {
	g, total, err := r.page(ctx, q, analytics.Answer)
	return analytics.AnswerEntries(g, q.Limit), total, err
}

// page asks the rollups for one dimension's list and cuts a paged query's
// window from it.
func (r *Reporter) page(ctx context.Context, q analytics.Query, d analytics.Dimension) ([]analytics.Group, int64, error) {
	g, err := r.list(ctx, q, d)
	if err != nil || !q.Window.Paged {
		return g, 0, err
	}
	g, total := analytics.Page(g, q.Window.Search, q.Window.Offset, q.Limit)
	return g, total, nil
}

// Cats lists the configured CATs.
func (r *Reporter) Cats(ctx context.Context) ([]catconfig.Cat, error) {
	return r.cats.Cats(ctx)
}

// list asks the rollups for one dimension's list of the query.
func (r *Reporter) list(ctx context.Context, q analytics.Query, d analytics.Dimension) ([]analytics.Group, error) {
	c, err := r.answer(ctx, r.rollups, q, analytics.ListOf(d))
	return c.Groups[d], err
}

// answer asks the store for the wanted parts of the query's answer, in
// one call, with the filter values that could never have been stored
// dropped first (analytics.Query.StorableOnly); it does not ask at all
// when no wanted part can count anything.
func (r *Reporter) answer(ctx context.Context, src ports.Aggregator, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	q, want = q.StorableOnly(want)
	if want == 0 {
		return analytics.Counts{}, nil
	}
	c, err := src.Answer(ctx, q, want)
	if err != nil {
		return analytics.Counts{}, wrapStore(err)
	}
	return c, nil
}

func wrapStore(err error) error {
	if errs.KindOf(err) != errs.KindInternal {
		return err
	}
	return errs.Wrap(errs.KindInternal, err, "analytics store failed")
}
