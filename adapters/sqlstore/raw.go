package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.InteractionLog = (*Store)(nil)

// Answer counts the wanted parts of the query's answer in the raw log: one
// pass over the range's rows counts the total and every list (see
// onePass), in read transactions of one committed state, and only the
// codes the answer returns are looked up in the dictionaries, in the
// same state.
func (s *Store) Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	out := analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}
	if err := checkMicrosecond(q.Range); err != nil {
		return out, err
	}
	if want == 0 || analytics.CheckText("cat", q.Cat) != nil {
		return out, nil
	}
	snap, err := s.openSnapshot(ctx)
	if err != nil {
		return out, err
	}
	defer snap.close()
	if err := s.passAnswer(ctx, snap, q, want, &out); err != nil {
		return analytics.Counts{}, err
	}
	return out, nil
}

// passAnswer counts the wanted parts of the query's answer in one pass in
// the snapshot's state, into out.
func (s *Store) passAnswer(ctx context.Context, snap *passSnapshot, q analytics.Query, want analytics.Parts, out *analytics.Counts) error {
	t, err := s.onePass(ctx, snap, newSelection(q.Selection()))
	if err != nil {
		return err
	}
	if want.Has(analytics.PartTotal) {
		out.Total = t.total
	}
	for _, d := range analytics.Dimensions {
		if !want.Has(analytics.ListOf(d)) {
			continue
		}
		if out.Groups[d], err = s.listOf(ctx, snap.own(), d, t.lists[d], q.LimitOf(d)); err != nil {
			return err
		}
	}
	return nil
}

// listOf turns a list's counts per code into its groups in
// analytics.SortGroups order: all of them when limit is 0 (sorted here, in
// place, so that the core need not sort a copy of a list hundreds of
// thousands long), otherwise the first limit, of which only the codes that
// can be among them (the limit highest counts and every code tied with the
// last) are looked up in the dictionary.
func (s *Store) listOf(ctx context.Context, q queryer, d analytics.Dimension, counts codeCounts, limit int) ([]analytics.Group, error) {
	if len(counts) == 0 {
		return nil, nil
	}
	if limit > 0 && limit < len(counts) {
		top := slices.Clone(counts)
		slices.SortFunc(top, func(a, b codeCount) int { return cmp.Compare(b.n, a.n) })
		last := top[limit-1].n
		cut := limit
		for cut < len(top) && top[cut].n == last {
			cut++
		}
		counts = top[:cut]
		slices.SortFunc(counts, byCode)
	}
	groups, err := s.groupsOf(ctx, q, d, counts)
	if err != nil {
		return nil, err
	}
	analytics.SortGroups(groups)
	return analytics.Top(groups, limit), nil
}

// groupsOf looks the codes up and returns their groups, in the counts'
// (code) order.
func (s *Store) groupsOf(ctx context.Context, q queryer, d analytics.Dimension, counts codeCounts) ([]analytics.Group, error) {
	groups := make([]analytics.Group, len(counts))
	found := make([]bool, len(counts))
	err := s.describe(ctx, q, d, counts, func(k int, key, text string) {
		groups[k], found[k] = analytics.Group{Key: key, Text: text, Count: counts[k].n}, true
	})
	if err != nil {
		return nil, err
	}
	if k := slices.Index(found, false); k >= 0 {
		return nil, internal(fmt.Errorf("%s: no entry for code %d", dictionaryTables[d], counts[k].code))
	}
	return groups, nil
}
