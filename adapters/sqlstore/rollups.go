package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Rollups answers counts from the daily rollups: one row per CAT, UTC day
// and combination of topic, model and persona (dictionary codes), holding
// how many api interactions it stands for; a few hundred rows a day. The
// question and answer lists, and every count of a selection filtered by
// question or answer, come from the raw pass instead: questions and
// answers are too varied to roll up (a daily rollup keyed by them keeps
// nearly a row per interaction), and the pass reads only their codes.
//
// Rollups count whole UTC days, so a range bound that is not a UTC
// midnight is an errs.KindInvalid error rather than an approximate answer.
type Rollups struct {
	store *Store
}

var _ ports.RollupStore = (*Rollups)(nil)

// answer counts the wanted parts of the query's answer: the total and the
// topic, model and persona lists from the rollups, the question and answer
// lists (and every part, when the query filters by question or answer)
// from one raw pass; all in read transactions of one committed state
// (snapshot.go), so that an answer never counts part of a write.
func (r *Rollups) answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	out := analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}
	if _, _, err := dayBounds(q.Range); err != nil {
		return out, err
	}
	if want == 0 || analytics.CheckText("cat", q.Cat) != nil {
		return out, nil
	}
	sel := q.Selection()
	raw := want & (analytics.ListOf(analytics.Question) | analytics.ListOf(analytics.Answer))
	if byQuestionOrAnswer(sel) {
		raw = want
	}
	cube := want &^ raw
	snap, err := r.store.openSnapshot(ctx)
	if err != nil {
		return out, err
	}
	defer snap.close()
	if cube.Has(analytics.PartTotal) {
		if out.Total, err = r.cubeTotal(ctx, snap.own(), sel); err != nil {
			return analytics.Counts{}, err
		}
	}
	for _, d := range []analytics.Dimension{analytics.Topic, analytics.Model, analytics.Persona} {
		if cube.Has(analytics.ListOf(d)) {
			if out.Groups[d], err = r.cubeGroups(ctx, snap.own(), q.SelectionFor(d), d); err != nil {
				return analytics.Counts{}, err
			}
		}
	}
	if raw != 0 {
		if err := r.store.passAnswer(ctx, snap, q, raw, &out); err != nil {
			return analytics.Counts{}, err
		}
	}
	return out, nil
}

// cubeTotal sums the rollups of a selection without question or answer
// filters.
func (r *Rollups) cubeTotal(ctx context.Context, tx bun.IConn, sel analytics.Selection) (int64, error) {
	q, ok, err := r.where(tx, sel)
	if err != nil || !ok {
		return 0, err
	}
	var n int64
	if err := q.ColumnExpr("CAST(COALESCE(SUM(hits), 0) AS BIGINT)").Scan(ctx, &n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}

func byQuestionOrAnswer(sel analytics.Selection) bool {
	return len(sel.Filters.Values(analytics.Question)) > 0 || len(sel.Filters.Values(analytics.Answer)) > 0
}

// cubeGroups sums the rollups per code of a rolled-up dimension, then
// looks the few codes up.
func (r *Rollups) cubeGroups(ctx context.Context, tx bun.IConn, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	cols, err := columnsOf(d)
	if err != nil {
		return nil, err
	}
	inner, ok, err := r.where(tx, sel)
	if err != nil || !ok {
		return nil, err
	}
	inner = inner.ColumnExpr("? AS code", bun.Ident(cols.code)).
		ColumnExpr("CAST(SUM(hits) AS BIGINT) AS hits").
		GroupExpr("?", bun.Ident(cols.code))
	q := r.store.db.NewSelect().Conn(tx).
		TableExpr("(?) AS s", inner).
		Join("JOIN ? AS d ON d.code = s.code", bun.Ident(cols.dictionary)).
		ColumnExpr("d.item_id AS grp_key").
		ColumnExpr("d.item_text AS grp_text").
		ColumnExpr("s.hits AS grp_count")
	var rows []groupRow
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, internal(err)
	}
	return toGroups(rows), nil
}

// where starts a query over the rollup rows of a selection without
// question or answer filters. ok is false when the selection matches
// nothing without asking the database.
func (r *Rollups) where(tx bun.IConn, sel analytics.Selection) (q *bun.SelectQuery, ok bool, err error) {
	start, end, err := dayBounds(sel.Range)
	if err != nil {
		return nil, false, err
	}
	n := newSelection(sel)
	if n.empty {
		return nil, false, nil
	}
	q = r.store.db.NewSelect().Conn(tx).TableExpr("rollup_cube").Where("cat = ?", n.cat)
	if !sel.Range.Start.IsZero() {
		q = q.Where("day >= ?", start)
	}
	if !sel.Range.End.IsZero() {
		q = q.Where("day < ?", end)
	}
	for _, d := range []analytics.Dimension{analytics.Topic, analytics.Model, analytics.Persona} {
		vals := n.filters[d]
		if len(vals) == 0 {
			continue
		}
		cols, err := columnsOf(d)
		if err != nil {
			return nil, false, err
		}
		q = q.Where("? IN (SELECT code FROM ? WHERE cat = ? AND item_id IN (?))",
			bun.Ident(cols.code), bun.Ident(cols.dictionary), n.cat, bun.List(vals))
	}
	return q, true, nil
}

// dayBounds returns the range as day numbers, refusing bounds that are not
// UTC midnights.
func dayBounds(r analytics.Range) (start, end int64, err error) {
	for _, b := range []time.Time{r.Start, r.End} {
		if !b.IsZero() && !b.UTC().Equal(b.UTC().Truncate(24*time.Hour)) {
			return 0, 0, errs.New(errs.KindInvalid, "rollups count whole UTC days: range bounds must be UTC midnights")
		}
	}
	return dayOf(r.Start), dayOf(r.End), nil
}

// dayOf returns the UTC day of t as days since 1970-01-01 (negative before).
func dayOf(t time.Time) int64 {
	sec := t.Unix()
	day := sec / 86400
	if sec%86400 < 0 {
		day--
	}
	return day
}
