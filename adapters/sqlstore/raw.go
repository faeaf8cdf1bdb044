package sqlstore

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
)

// Total counts the selection's interactions in the raw log. It counts
// every dimension's list of the same request in the same pass and keeps
// them for the Groups calls that follow (see onePass).
func (s *Store) Total(ctx context.Context, sel analytics.Selection) (int64, error) {
	if err := checkMicrosecond(sel.Range); err != nil {
		return 0, err
	}
	n := newSelection(sel)
	if n.empty {
		return 0, nil
	}
	gen := s.memo.generation()
	res, err := s.onePass(ctx, n)
	if err != nil {
		return 0, err
	}
	for _, d := range analytics.Dimensions {
		s.memo.put(memoKey(n.withoutFilter(d), d), res.groups[d], gen)
	}
	return res.total, nil
}

// Groups counts the selection's interactions in the raw log per distinct
// key and text of the dimension.
func (s *Store) Groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	cols, err := columnsOf(d)
	if err != nil {
		return nil, err
	}
	q, ok, err := s.rawWhere(sel)
	if err != nil || !ok {
		return nil, err
	}
	if groups, ok := s.memo.take(memoKey(newSelection(sel), d)); ok {
		return groups, nil
	}
	q = q.ColumnExpr("? AS grp_key", bun.Ident(cols.key)).
		ColumnExpr("? AS grp_text", bun.Ident(cols.text)).
		ColumnExpr("COUNT(*) AS grp_count").
		GroupExpr("?", bun.Ident(cols.key))
	if cols.text != cols.key {
		q = q.GroupExpr("?", bun.Ident(cols.text))
	}
	var rows []groupRow
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, internal(err)
	}
	return toGroups(rows), nil
}

// rawWhere starts a query over the raw rows of the selection. ok is false
// when the selection matches nothing without asking the database.
func (s *Store) rawWhere(sel analytics.Selection) (q *bun.SelectQuery, ok bool, err error) {
	if err := checkMicrosecond(sel.Range); err != nil {
		return nil, false, err
	}
	n := newSelection(sel)
	if n.empty {
		return nil, false, nil
	}
	q = s.db.NewSelect().TableExpr("interactions").
		Where("cat = ?", n.cat).
		Where("event_kind = ?", analytics.EventKindAPI)
	if !n.rng.Start.IsZero() {
		q = q.Where("occurred_at >= ?", s.dialect.timeArg(n.rng.Start))
	}
	if !n.rng.End.IsZero() {
		q = q.Where("occurred_at < ?", s.dialect.timeArg(n.rng.End))
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
		q = q.Where("? IN (?)", bun.Ident(cols.key), bun.List(vals))
	}
	return q, true, nil
}
