package sqlstore

import (
	"context"
	"database/sql"
	"math/bits"
	"runtime"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
)

// The raw path counts a whole request in one pass over its rows.
//
// A result is asked for as six calls: Total under every filter, then the
// groups of each dimension under every filter but its own. Six GROUP BY
// queries read the rows six times and sort their texts six times; instead
// Total reads the rows once and counts all six in Go: a row that fails no
// filter counts in the total and in every list, a row that fails exactly
// one filter counts only in that filter's own list, any other row counts
// nowhere. Total keeps the five lists (rawMemo) for the Groups calls that
// follow, which then cost nothing. The rows are read in two halves of the
// time range at once, on two connections.

// passColumns are the columns a pass reads, in scan order; passKey and
// passText give, per dimension, the index of its key and text column.
const passColumns = "topic, model, persona, question_id, question, answer_id, answer" //nolint:gosec // column names, not a credential

var (
	passKey  = [5]int{0, 1, 2, 3, 5}
	passText = [5]int{0, 1, 2, 4, 6}
)

// passResult is what one pass counts.
type passResult struct {
	total  int64
	groups [5][]analytics.Group // by analytics.Dimension
}

// tally counts one part of a pass.
type tally struct {
	total int64
	lists [5]map[string]*tallyEntry // by dimension, keyed by key
}

// tallyEntry is one (key, text) count; entries of the same key with other
// texts are chained.
type tallyEntry struct {
	text  string
	count int64
	next  *tallyEntry
}

func newTally() *tally {
	t := &tally{}
	for d := range t.lists {
		t.lists[d] = map[string]*tallyEntry{}
	}
	return t
}

func (t *tally) add(d int, key, text []byte, n int64) {
	head := t.lists[d][string(key)]
	for e := head; e != nil; e = e.next {
		if e.text == string(text) {
			e.count += n
			return
		}
	}
	k := string(key)
	txt := k
	if string(text) != k {
		txt = string(text)
	}
	t.lists[d][k] = &tallyEntry{text: txt, count: n, next: head}
}

// merge adds another part's counts to t.
func (t *tally) merge(o *tally) {
	t.total += o.total
	for d, list := range o.lists {
		for k, e := range list {
			for ; e != nil; e = e.next {
				t.add(d, []byte(k), []byte(e.text), e.count)
			}
		}
	}
}

func (t *tally) result() passResult {
	r := passResult{total: t.total}
	for d, list := range t.lists {
		out := make([]analytics.Group, 0, len(list))
		for k, e := range list {
			for ; e != nil; e = e.next {
				out = append(out, analytics.Group{Key: k, Text: e.text, Count: e.count})
			}
		}
		r.groups[d] = out
	}
	return r
}

// passFilter is one filtered dimension of a pass.
type passFilter struct {
	dim    int
	values map[string]struct{}
}

// onePass counts the selection's total and, for each dimension, its
// groups under every filter but the dimension's own.
func (s *Store) onePass(ctx context.Context, n selection) (passResult, error) {
	var filters []passFilter
	for _, d := range analytics.Dimensions {
		if vals := n.filters[d]; len(vals) > 0 {
			f := passFilter{dim: int(d), values: make(map[string]struct{}, len(vals))}
			for _, v := range vals {
				f.values[v] = struct{}{}
			}
			filters = append(filters, f)
		}
	}
	parts, err := s.passParts(ctx, n)
	if err != nil || len(parts) == 0 {
		return passResult{}, err
	}
	tallies := make([]*tally, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for k, rng := range parts {
		tallies[k] = newTally()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = s.passPart(ctx, n.cat, rng, filters, tallies[k])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return passResult{}, err
		}
	}
	for _, t := range tallies[1:] {
		tallies[0].merge(t)
	}
	return tallies[0].result(), nil
}

// passParts splits the selection's range in two halves of time when the
// pool allows two connections, so both cores read. It returns no part
// when the CAT has no rows in the range.
func (s *Store) passParts(ctx context.Context, n selection) ([]analytics.Range, error) {
	if s.db.DB.Stats().MaxOpenConnections == 1 || runtime.GOMAXPROCS(0) < 2 {
		return []analytics.Range{n.rng}, nil
	}
	q := s.db.NewSelect().TableExpr("interactions").
		ColumnExpr("MIN(occurred_at)").ColumnExpr("MAX(occurred_at)").
		Where("cat = ?", n.cat).Where("event_kind = ?", analytics.EventKindAPI)
	q = s.whereRange(q, n.rng)
	first, last, ok, err := s.scanTimes(ctx, q)
	if err != nil || !ok {
		return nil, err
	}
	mid := first.Add(last.Sub(first) / 2).Truncate(time.Microsecond).Add(time.Microsecond)
	return []analytics.Range{{Start: n.rng.Start, End: mid}, {Start: mid, End: n.rng.End}}, nil
}

// scanTimes reads a MIN and MAX of occurred_at; ok is false when they are
// NULL (no rows).
func (s *Store) scanTimes(ctx context.Context, q *bun.SelectQuery) (first, last time.Time, ok bool, err error) {
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

func (s *Store) whereRange(q *bun.SelectQuery, r analytics.Range) *bun.SelectQuery {
	if !r.Start.IsZero() {
		q = q.Where("occurred_at >= ?", s.dialect.timeArg(r.Start))
	}
	if !r.End.IsZero() {
		q = q.Where("occurred_at < ?", s.dialect.timeArg(r.End))
	}
	return q
}

// passPart counts one part of a pass into t.
func (s *Store) passPart(ctx context.Context, cat string, rng analytics.Range, filters []passFilter, t *tally) error {
	q := s.db.NewSelect().TableExpr("interactions").ColumnExpr(passColumns).
		Where("cat = ?", cat).Where("event_kind = ?", analytics.EventKindAPI)
	rows, err := s.whereRange(q, rng).Rows(ctx)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	var f [7]sql.RawBytes
	dest := make([]any, len(f))
	for k := range f {
		dest[k] = &f[k]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return internal(err)
		}
		var failed uint
		for _, fl := range filters {
			if _, ok := fl.values[string(f[passKey[fl.dim]])]; !ok {
				failed |= 1 << fl.dim
			}
		}
		switch {
		case failed == 0:
			t.total++
			for d := range passKey {
				t.add(d, f[passKey[d]], f[passText[d]], 1)
			}
		case failed&(failed-1) == 0:
			d := bits.TrailingZeros(failed)
			t.add(d, f[passKey[d]], f[passText[d]], 1)
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}
