package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.TopAggregator = (*Store)(nil)

// total counts the selection's interactions in the raw log. It counts
// every dimension's list of the same request in the same pass and keeps
// them for the Groups calls that follow (see onePass).
func (s *Store) total(ctx context.Context, sel analytics.Selection) (int64, error) {
	if err := checkMicrosecond(sel.Range); err != nil {
		return 0, err
	}
	n := newSelection(sel)
	if n.empty {
		return 0, nil
	}
	gen := s.memo.Generation()
	t, err := s.onePass(ctx, n)
	if err != nil {
		return 0, err
	}
	for _, d := range analytics.Dimensions {
		s.memo.Put(memoKey(n.withoutFilter(d), d), t.lists[d], gen)
	}
	return t.total, nil
}

// groups counts the selection's interactions in the raw log per distinct
// key and text of the dimension.
func (s *Store) groups(ctx context.Context, sel analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
	counts, err := s.dimensionCounts(ctx, sel, d)
	if err != nil || len(counts) == 0 {
		return nil, err
	}
	codes := make([]uint64, 0, len(counts))
	for code := range counts {
		codes = append(codes, code)
	}
	return s.groupsOf(ctx, d, codes, counts)
}

// topGroups returns the first n groups of the dimension in
// analytics.SortGroups order. Only the codes that can be among them (the
// n highest counts and every code tied with the last) are looked up in the
// dictionary.
func (s *Store) topGroups(ctx context.Context, sel analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error) {
	counts, err := s.dimensionCounts(ctx, sel, d)
	if err != nil || len(counts) == 0 {
		return nil, err
	}
	codes := make([]uint64, 0, len(counts))
	for code := range counts {
		codes = append(codes, code)
	}
	if n < len(codes) {
		slices.SortFunc(codes, func(a, b uint64) int { return cmp.Compare(counts[b], counts[a]) })
		last := counts[codes[n-1]]
		cut := n
		for cut < len(codes) && counts[codes[cut]] == last {
			cut++
		}
		codes = codes[:cut]
	}
	groups, err := s.groupsOf(ctx, d, codes, counts)
	if err != nil {
		return nil, err
	}
	analytics.SortGroups(groups)
	return groups[:min(n, len(groups))], nil
}

// dimensionCounts returns the selection's counts per code of the
// dimension: the list a Total of the same request left, or a pass of its
// own. A pass counts a dimension under every filter but its own, so its
// own filter is applied to the codes afterwards.
func (s *Store) dimensionCounts(ctx context.Context, sel analytics.Selection, d analytics.Dimension) (codeCounts, error) {
	if err := checkMicrosecond(sel.Range); err != nil {
		return nil, err
	}
	if int(d) < 0 || int(d) >= dimsCodes {
		return nil, errs.New(errs.KindInvalid, "unknown dimension %d", int(d))
	}
	n := newSelection(sel)
	if n.empty {
		return nil, nil
	}
	if counts, ok := s.memo.Take(memoKey(n, d)); ok {
		return counts, nil
	}
	gen := s.memo.Generation()
	t, err := s.onePass(ctx, n)
	if err != nil {
		return nil, err
	}
	// The pass counted the other dimensions' lists of the same request
	// too: keep them as Total would.
	for _, other := range analytics.Dimensions {
		if other != d {
			s.memo.Put(memoKey(n.withoutFilter(other), other), t.lists[other], gen)
		}
	}
	counts := t.lists[d]
	if wanted, ok := t.filters[d]; ok {
		for code := range counts {
			if _, keep := wanted[code]; !keep {
				delete(counts, code)
			}
		}
	}
	return counts, nil
}

// groupsOf looks the codes up and returns their groups.
func (s *Store) groupsOf(ctx context.Context, d analytics.Dimension, codes []uint64, counts codeCounts) ([]analytics.Group, error) {
	entries, err := s.describe(ctx, d, codes)
	if err != nil {
		return nil, err
	}
	out := make([]analytics.Group, 0, len(codes))
	for _, code := range codes {
		e, ok := entries[code]
		if !ok {
			return nil, internal(fmt.Errorf("%s: no entry for code %d", dictionaryTables[d], code))
		}
		out = append(out, analytics.Group{Key: e.key, Text: e.text, Count: counts[code]})
	}
	return out, nil
}
