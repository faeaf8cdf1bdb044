package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
		"runtime"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/sync/errgroup"

	"github.com/catsrv/catsrv/core/analytics"
)

// The raw path counts a whole request in one pass over its rows.
//
// A result is asked for as six calls: Total under every filter, then the
// groups of each dimension under every filter but its own. Instead of six
// GROUP BY queries over texts, Total reads the rows' dictionary codes once
// (dims, see dims.go) and counts all six in Go: a row that fails no filter
// counts in the total and in every list, a row that fails exactly one
// filter counts only in that filter's own list, any other row counts
// nowhere. Only the codes that were counted are then looked up in the
// dictionaries. Total keeps the five lists (rawMemo) for the Groups calls
// that follow, which then cost nothing. The range is read in passParts
// slices of time, passWorkers at a time on their own connections.
const (
	passParts   = 4
	passWorkers = 2
)

// codeCounts counts rows per dictionary code of one dimension.
type codeCounts = map[uint64]int64

// onePass counts the selection's total and, for each dimension, its
// codes under every filter but the dimension's own.
func (s *Store) onePass(ctx context.Context, n selection) (passOutcome, error) {
	out := passOutcome{filters: map[analytics.Dimension]map[uint64]struct{}{}}
	maxCodes, err := s.maxCodes(ctx)
	if err != nil {
		return out, err
	}
	var filters []passFilter
	for _, d := range analytics.Dimensions {
		if vals := n.filters[d]; len(vals) > 0 {
			codes, err := s.codesOf(ctx, d, n.cat, vals)
			if err != nil {
				return out, err
			}
			filters = append(filters, passFilter{dim: int(d), codes: newCodeSet(codes, maxCodes[d])})
			out.filters[d] = codes
		}
	}
	parts, err := s.passParts(ctx, n)
	if err != nil {
		return out, err
	}
	workers := min(s.passWorkers(), max(1, len(parts)))
	tallies := make([]*tally, workers)
	queue := make(chan analytics.Range, len(parts))
	for _, p := range parts {
		queue <- p
	}
	close(queue)
	g, gctx := errgroup.WithContext(ctx)
	for k := range tallies {
		tallies[k] = newTally(maxCodes)
		g.Go(func() error {
			for rng := range queue {
				if err := s.passPart(gctx, n.cat, rng, filters, tallies[k]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return out, err
	}
	for _, t := range tallies[1:] {
		tallies[0].merge(t)
	}
	out.total = tallies[0].total
	for d, c := range tallies[0].lists {
		out.lists[d] = c.counts()
	}
	return out, nil
}

func (s *Store) passWorkers() int {
	if s.db.DB.Stats().MaxOpenConnections == 1 {
		return 1
	}
	return max(1, min(passWorkers, runtime.GOMAXPROCS(0)))
}

// passParts splits the selection's range into up to passParts slices of
// time, so that several connections read at once. It returns no part when
// the CAT has no rows in the range.
func (s *Store) passParts(ctx context.Context, n selection) ([]analytics.Range, error) {
	if s.passWorkers() == 1 {
		return []analytics.Range{n.rng}, nil
	}
	// Two subqueries: each is one index seek, where MIN and MAX in one
	// query would read the whole range.
	bound := func(agg string) *bun.SelectQuery {
		q := s.db.NewSelect().TableExpr("interactions").ColumnExpr(agg+"(occurred_at)").
			Where("cat = ?", n.cat).Where("event_kind = ?", analytics.EventKindAPI)
		if !n.rng.Start.IsZero() {
			q = q.Where("occurred_at >= ?", s.dialect.timeArg(n.rng.Start))
		}
		if !n.rng.End.IsZero() {
			q = q.Where("occurred_at < ?", s.dialect.timeArg(n.rng.End))
		}
		return q
	}
	q := s.db.NewSelect().ColumnExpr("(?)", bound("MIN")).ColumnExpr("(?)", bound("MAX"))
	first, last, ok, err := s.scanTimes(ctx, q)
	if err != nil || !ok {
		return nil, err
	}
	step := last.Sub(first) / passParts
	if step < time.Microsecond {
		return []analytics.Range{n.rng}, nil
	}
	parts := make([]analytics.Range, 0, passParts)
	start := n.rng.Start
	for k := 1; k < passParts; k++ {
		cut := first.Add(step * time.Duration(k)).Truncate(time.Microsecond).Add(time.Microsecond)
		parts = append(parts, analytics.Range{Start: start, End: cut})
		start = cut
	}
	return append(parts, analytics.Range{Start: start, End: n.rng.End}), nil
}

// scanTimes reads a MIN and MAX of occurred_at; ok is false when they are
// NULL (no rows).
func (s *Store) scanTimes(ctx context.Context, q interface {
	Scan(ctx context.Context, dest ...any) error
}) (first, last time.Time, ok bool, err error) {
	if s.dialect == postgresDialect {
		var lo, hi sql.NullTime
		if err := q.Scan(ctx, &lo, &hi); err != nil {
			return first, last, false, internal(err)
		}
		return lo.Time, hi.Time, lo.Valid && hi.Valid, nil
	}
	var lo, hi sql.NullInt64
	if err := q.Scan(ctx, &lo, &hi); err != nil {
		return first, last, false, internal(err)
	}
	return time.UnixMicro(lo.Int64).UTC(), time.UnixMicro(hi.Int64).UTC(), lo.Valid && hi.Valid, nil
}

// passPart counts one part of a pass into t: the database concatenates
// the part's dims into one value, counted here row by row.
func (s *Store) passPart(ctx context.Context, cat string, rng analytics.Range, filters []passFilter, t *tally) error {
	concat := "group_concat(dims, '')"
	if s.dialect == postgresDialect {
		concat = "string_agg(dims, ''::bytea)"
	}
	// The literal event kind lets both planners use the partial index.
	query := "SELECT COUNT(*), " + concat + " FROM interactions WHERE cat = " + s.dialect.placeholders(1, 1) +
		" AND event_kind = '" + analytics.EventKindAPI + "'"
	args := []any{cat}
	if !rng.Start.IsZero() {
		args = append(args, s.dialect.timeArg(rng.Start))
		query += " AND occurred_at >= " + s.dialect.placeholders(len(args), 1)
	}
	if !rng.End.IsZero() {
		args = append(args, s.dialect.timeArg(rng.End))
		query += " AND occurred_at < " + s.dialect.placeholders(len(args), 1)
	}
	var (
		rows int64
		dims []byte
	)
	if err := s.db.DB.QueryRowContext(ctx, query, args...).Scan(&rows, &dims); err != nil {
		return internal(err)
	}
	decoded, err := eachDims(dims, func(codes *[dimsCodes]uint64) { t.count(codes, filters) })
	if err == nil && decoded != rows {
		err = fmt.Errorf("%w: %d rows, %d coded", errCorruptDims, rows, decoded)
	}
	if err != nil {
		return internal(err)
	}
	return nil
}
