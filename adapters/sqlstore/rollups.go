package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Rollups answers counts from the daily rollups: one row per CAT, UTC day
// and combination of topic, model, persona, question and answer, holding
// how many api interactions it stands for. Questions and answers (and the
// names, to keep rows narrow and indexable) are dictionary codes; a
// dictionary entry is one distinct (CAT, id, text).
//
// Rollups count whole UTC days, so a range bound that is not a UTC
// midnight is an errs.KindInvalid error rather than an approximate answer.
type Rollups struct {
	store *Store
}

// Total counts the selection's interactions from the rollups.
func (r *Rollups) Total(ctx context.Context, sel analytics.Selection) (int64, error) {
	q, ok, err := r.where(sel)
	if err != nil || !ok {
		return 0, err
	}
	var n int64
	if err := q.ColumnExpr("CAST(COALESCE(SUM(hits), 0) AS BIGINT)").Scan(ctx, &n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}

// Groups counts the selection's interactions from the rollups per distinct
// key and text of the dimension.
func (r *Rollups) Groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	cols, err := columnsOf(d)
	if err != nil {
		return nil, err
	}
	inner, ok, err := r.where(sel)
	if err != nil || !ok {
		return nil, err
	}
	// Sum per code first, then look the few codes up: grouping by long
	// texts would be far slower.
	inner = inner.ColumnExpr("? AS code", bun.Ident(cols.code)).
		ColumnExpr("CAST(SUM(hits) AS BIGINT) AS hits").
		GroupExpr("?", bun.Ident(cols.code))
	q := r.store.db.NewSelect().
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

// where starts a query over the rollup rows of the selection. ok is false
// when the selection matches nothing without asking the database.
func (r *Rollups) where(sel analytics.Selection) (q *bun.SelectQuery, ok bool, err error) {
	start, end, err := dayBounds(sel.Range)
	if err != nil {
		return nil, false, err
	}
	n := newSelection(sel)
	if n.empty {
		return nil, false, nil
	}
	q = r.store.db.NewSelect().TableExpr("rollup_daily").Where("cat = ?", n.cat)
	if !sel.Range.Start.IsZero() {
		q = q.Where("day >= ?", start)
	}
	if !sel.Range.End.IsZero() {
		q = q.Where("day < ?", end)
	}
	for _, d := range analytics.Dimensions {
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
