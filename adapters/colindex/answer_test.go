package colindex_test

import (
	"slices"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// queryOf is the query of a selection, with a limit.
func queryOf(sel analytics.Selection, limit int) analytics.Query {
	return analytics.Query{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters, Limit: limit}
}

// answerOf is the index's whole answer to the selection's query.
func answerOf(t testing.TB, idx *colindex.Index, sel analytics.Selection, limit int) analytics.Counts {
	t.Helper()
	c, err := idx.Answer(t.Context(), queryOf(sel, limit), analytics.AllParts)
	if err != nil {
		t.Fatalf("Answer(%+v): %v", sel, err)
	}
	return c
}

// totalOf is the total of the selection's answer.
func totalOf(t testing.TB, idx *colindex.Index, sel analytics.Selection) int64 {
	t.Helper()
	c, err := idx.Answer(t.Context(), queryOf(sel, 0), analytics.PartTotal)
	if err != nil {
		t.Fatalf("Answer(%+v): %v", sel, err)
	}
	return c.Total
}

// expectAnswer compares the index's answer to the selection's query, with
// the limit, against the reference over rows. The index's lists come in
// analytics.SortGroups order, ties included (its speed trick), so they
// are compared as they come.
func expectAnswer(t *testing.T, name string, idx *colindex.Index, rows []analytics.Interaction, sel analytics.Selection, limit int) {
	t.Helper()
	q := queryOf(sel, limit)
	want := analytics.CountAnswer(rows, q, analytics.AllParts)
	got := answerOf(t, idx, sel, limit)
	if got.Total != want.Total {
		t.Errorf("%s: total = %d, reference %d", name, got.Total, want.Total)
	}
	for _, d := range analytics.Dimensions {
		w := slices.Clone(want.Groups[d])
		analytics.SortGroups(w)
		if g := got.Groups[d]; len(g) != len(w) || (len(w) > 0 && !slices.Equal(g, w)) {
			t.Errorf("%s: list %v (limit %d):\n got  %v\n want %v", name, d, limit, g, w)
		}
	}
}
