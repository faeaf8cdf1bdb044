package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/catsrv/catsrv/core/analytics"
)

// The raw pass counts a whole answer in one read of the rows' codes
// (dims_blocks): a row that fails no filter counts in the total and every
// list, one that fails exactly one filter only in that filter's list
// (analytics.CountAnswer's rule). Only the codes answered are looked up.
// The range is read in passParts ranges of days, passWorkers at a time on
// their own connections, in read transactions of one state (snapshot.go).
const (
	passParts   = 4
	passWorkers = 2
)

// codeCounts counts rows per dictionary code of one dimension: the codes
// counted at least once, in code order.
type codeCounts = []codeCount

// codeCount is one code's count.
type codeCount struct {
	code uint64
	n    int64
}

// byCode orders counts by code.
func byCode(a, b codeCount) int { return cmp.Compare(a.code, b.code) }

// onePass counts the selection's total and, for each dimension, its
// codes under every filter but the dimension's own, in the snapshot's
// state. A filter none of whose values could have been stored (see
// newSelection) matches no row.
func (s *Store) onePass(ctx context.Context, snap *passSnapshot, n selection) (passOutcome, error) {
	var out passOutcome
	maxCodes, err := s.maxCodes(ctx, snap.own())
	if err != nil {
		return out, err
	}
	var filters []passFilter
	matchNone := 0
	for _, d := range analytics.Dimensions {
		vals, filtered := n.filters[d]
		if !filtered {
			continue
		}
		codes := map[uint64]struct{}{}
		if len(vals) > 0 {
			if codes, err = s.codesOf(ctx, snap.own(), d, n.cat, vals); err != nil {
				return out, err
			}
		}
		if len(codes) == 0 {
			matchNone++
		}
		filters = append(filters, passFilter{dim: int(d), codes: newCodeSet(codes, maxCodes[d])})
	}
	if matchNone > 1 {
		return out, nil // every row fails two filters: none counts anywhere
	}
	parts, err := s.passParts(ctx, snap.own(), n)
	if err != nil {
		return out, err
	}
	if s.hooks != nil && s.hooks.passPlanned != nil {
		s.hooks.passPlanned()
	}
	if err := s.extend(ctx, snap, min(s.passWorkers(), max(1, len(parts)))-1); err != nil {
		return out, err
	}
	tallies := make([]*tally, len(snap.txs))
	queue := make(chan dayRange, len(parts))
	for _, p := range parts {
		queue <- p
	}
	close(queue)
	g, gctx := errgroup.WithContext(ctx)
	for k := range tallies {
		tallies[k] = newTally(maxCodes)
		g.Go(func() error {
			for days := range queue {
				if err := s.passPart(gctx, snap.txs[k], n.cat, days, n.rng, filters, tallies[k]); err != nil {
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

// dayRange is an inclusive range of UTC days.
type dayRange struct{ first, last int64 }

// passParts splits the selection's days into up to passParts ranges, so
// that several connections read at once. It returns no part when the CAT
// has no rows in the range.
func (s *Store) passParts(ctx context.Context, q queryer, n selection) ([]dayRange, error) {
	p := s.dialect.placeholders
	// Two subqueries: each is one seek of the primary key.
	query := "SELECT (SELECT MIN(day) FROM dims_blocks WHERE cat = " + p(1, 1) + "), " +
		"(SELECT MAX(day) FROM dims_blocks WHERE cat = " + p(2, 1) + ")"
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, query, n.cat, n.cat).Scan(&lo, &hi); err != nil {
		return nil, internal(err)
	}
	if !lo.Valid || !hi.Valid {
		return nil, nil
	}
	first, last := lo.Int64, hi.Int64
	if !n.rng.Start.IsZero() {
		first = max(first, dayOf(n.rng.Start))
	}
	if !n.rng.End.IsZero() {
		last = min(last, dayOf(n.rng.End.Add(-time.Microsecond)))
	}
	if first > last {
		return nil, nil
	}
	parts := int64(1)
	if s.passWorkers() > 1 {
		parts = min(passParts, last-first+1)
	}
	out := make([]dayRange, 0, parts)
	for k := range parts {
		out = append(out, dayRange{
			first: first + (last-first+1)*k/parts,
			last:  first + (last-first+1)*(k+1)/parts - 1,
		})
	}
	return out, nil
}

// passPart counts one part of a pass into t: the blocks of its days,
// decoded here, skipping the rows of the first and last day that lie
// outside the range.
func (s *Store) passPart(ctx context.Context, q queryer, cat string, days dayRange, rng analytics.Range, filters []passFilter, t *tally) error {
	p := s.dialect.placeholders
	query := "SELECT day, row_count, data FROM dims_blocks WHERE cat = " + p(1, 1) + // #nosec G202 -- placeholders only
		" AND day >= " + p(2, 1) + " AND day <= " + p(3, 1)
	rows, err := q.QueryContext(ctx, query, cat, days.first, days.last)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !rng.Start.IsZero() {
		from = rng.Start.UnixMicro()
	}
	if !rng.End.IsZero() {
		to = rng.End.UnixMicro()
	}
	var (
		day, want int64
		data      sql.RawBytes
	)
	count := func(micros int64, codes *[dimsCodes]uint64, _ *blockUsage) {
		if micros >= from && micros < to {
			t.count(codes, filters)
		}
	}
	for rows.Next() {
		if err := rows.Scan(&day, &want, &data); err != nil {
			return internal(err)
		}
		got, err := eachBlockRow(day, data, count)
		if err == nil && int64(got) != want {
			err = fmt.Errorf("%w: a block of %d rows holds %d", errCorruptDims, want, got)
		}
		if err != nil {
			return internal(err)
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}
