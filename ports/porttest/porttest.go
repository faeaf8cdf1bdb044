// Package porttest holds the contract test suites of the ports. Each
// adapter's tests run the suite of the port it implements against a real
// instance (memory, SQLite, PostgreSQL), so every back end is held to the
// same behaviour: the core's reference aggregation.
package porttest

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// TestInteractionLog runs the contract of ports.InteractionLog (and of
// ports.RollupStore, when read is the rollup store) against the adapter
// that open creates. Expected answers come from the core reference,
// analytics.CountAnswer and Aggregate, over the same input.
func TestInteractionLog(t *testing.T, open func(t *testing.T) (log ports.InteractionLog, read ports.Aggregator)) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"EmptyStore", testEmptyStore},
		{"AppendReturnsCount", testAppendReturnsCount},
		{"NonAPIKindsIgnored", testNonAPIKindsIgnored},
		{"RangeBounds", testRangeBounds},
		{"EachFilter", testEachFilter},
		{"OrWithinAndAcross", testOrWithinAndAcross},
		{"SelectiveFiltering", testSelectiveFiltering},
		{"GivenAndDerivedIDs", testGivenAndDerivedIDs},
		{"CatsIsolated", testCatsIsolated},
		{"AllOrNothingOnSequenceError", testAllOrNothingOnSequenceError},
		{"AllOrNothingOnInvalidInteraction", testAllOrNothingOnInvalid},
		{"AllOrNothingOnCancel", testAllOrNothingOnCancel},
		{"LiteralTexts", testLiteralTexts},
		{"ThousandFilterValues", testThousandFilterValues},
		{"UnstorableFilterValues", testUnstorableFilterValues},
		{"InteractionIDStoredOnce", testInteractionIDStoredOnce},
		{"InteractionIDConcurrentRetries", testInteractionIDConcurrentRetries},
		{"InteractionIDStoredOnceLong", testInteractionIDStoredOnceLong},
		{"InteractionIDConcurrentRetriesLong", testInteractionIDConcurrentRetriesLong},
	}
	// Each case opens its own store: open must give a new one per call.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t, open))
		})
	}
	t.Run("Property", func(t *testing.T) {
		t.Parallel()
		testProperty(t, open)
	})
}

// harness pairs a store under test with the reference: every interaction
// appended to the store is kept, normalized, in ref.
type harness struct {
	t    *testing.T
	open func(t *testing.T) (ports.InteractionLog, ports.Aggregator)
	log  ports.InteractionLog
	read ports.Aggregator
	ref  []analytics.Interaction
}

func newHarness(t *testing.T, open func(t *testing.T) (ports.InteractionLog, ports.Aggregator)) *harness {
	t.Helper()
	log, read := open(t)
	return &harness{t: t, open: open, log: log, read: read}
}

// in returns the harness for a subtest: same store and reference,
// failures reported on t.
func (h *harness) in(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// append stores the interactions in one Append and in the reference.
func (h *harness) append(in ...analytics.Interaction) {
	h.t.Helper()
	n, err := h.log.Append(h.t.Context(), analytics.Each(in))
	if err != nil {
		h.t.Fatalf("Append: %v", err)
	}
	if n != len(in) {
		h.t.Fatalf("Append returned %d, want %d", n, len(in))
	}
	for _, i := range in {
		h.ref = append(h.ref, i.Normalize())
	}
}

// answer is the store's Answer, failing the test on error.
func (h *harness) answer(q analytics.Query, want analytics.Parts) analytics.Counts {
	h.t.Helper()
	c, err := h.read.Answer(h.t.Context(), q, want)
	if err != nil {
		h.t.Fatalf("Answer(%+v, %b): %v", q, want, err)
	}
	return c
}

// queryOf is the query of a selection, without a limit.
func queryOf(sel analytics.Selection) analytics.Query {
	return analytics.Query{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters}
}

// total is the total of the selection's answer.
func (h *harness) total(sel analytics.Selection) int64 {
	h.t.Helper()
	return h.answer(queryOf(sel), analytics.PartTotal).Total
}

// groups is the list of dimension d of the selection's answer (every
// filter but d's own), sorted.
func (h *harness) groups(sel analytics.Selection, d analytics.Dimension) []analytics.Group {
	h.t.Helper()
	return sortedGroups(h.answer(queryOf(sel), analytics.ListOf(d)).Groups[d])
}

func sortedGroups(g []analytics.Group) []analytics.Group {
	g = slices.Clone(g)
	analytics.SortGroups(g)
	return g
}

// expect checks the store's answer to the selection's query against the
// reference (analytics.CountAnswer): the whole answer, each part asked
// alone, and the question and answer lists cut at several limits. It
// returns the reference total.
func (h *harness) expect(sel analytics.Selection) int64 {
	h.t.Helper()
	q := queryOf(sel)
	want := analytics.CountAnswer(h.ref, q, analytics.AllParts)
	if ref := analytics.CountTotal(h.ref, sel); ref != want.Total {
		h.t.Fatalf("reference total %d, CountTotal %d", want.Total, ref)
	}
	got := h.answer(q, analytics.AllParts)
	h.compare(q, analytics.AllParts, got, want)
	for _, part := range parts() {
		h.compare(q, part, h.answer(q, part), want)
	}
	h.expectTop(q, want)
	return want.Total
}

// parts lists every part alone.
func parts() []analytics.Parts {
	out := []analytics.Parts{analytics.PartTotal}
	for _, d := range analytics.Dimensions {
		out = append(out, analytics.ListOf(d))
	}
	return out
}

// compare checks the wanted parts of an answer against the reference's
// and that the others are left empty. Lists compare sorted, except a
// limited question or answer list, which must be in list order.
func (h *harness) compare(q analytics.Query, parts analytics.Parts, got, want analytics.Counts) {
	h.t.Helper()
	if parts.Has(analytics.PartTotal) && got.Total != want.Total {
		h.t.Errorf("Answer(%+v, %b): total %d, reference %d", q, parts, got.Total, want.Total)
	}
	if !parts.Has(analytics.PartTotal) && got.Total != 0 {
		h.t.Errorf("Answer(%+v, %b): total %d not asked for", q, parts, got.Total)
	}
	for _, d := range analytics.Dimensions {
		g := got.Groups[d]
		if !parts.Has(analytics.ListOf(d)) {
			if len(g) != 0 {
				h.t.Errorf("Answer(%+v, %b): list %v not asked for: %v", q, parts, d, g)
			}
			continue
		}
		w := want.Groups[d]
		if q.LimitOf(d) == 0 {
			g, w = sortedGroups(g), sortedGroups(w)
		}
		if len(g) != len(w) || (len(w) > 0 && !slices.Equal(g, w)) {
			h.t.Errorf("Answer(%+v, %b), list %v:\n got       %v\n reference %v", q, parts, d, g, w)
		}
	}
}

// expectTop checks the answer with limits: exactly the first n question
// and answer groups in analytics.SortGroups order, ties at the cut
// included, at several sizes; the total and other lists as without one.
func (h *harness) expectTop(q analytics.Query, whole analytics.Counts) {
	h.t.Helper()
	questions := len(whole.Groups[analytics.Question])
	for _, n := range []int{1, 2, 3, questions, questions + 1} {
		if n < 1 {
			continue
		}
		lq := q
		lq.Limit = n
		want := analytics.CountAnswer(h.ref, lq, analytics.AllParts)
		h.compare(lq, analytics.AllParts, h.answer(lq, analytics.AllParts), want)
		for _, d := range []analytics.Dimension{analytics.Question, analytics.Answer} {
			h.compare(lq, analytics.ListOf(d), h.answer(lq, analytics.ListOf(d)), want)
		}
	}
}

// result assembles the query's result from the store's answer, as the
// reporter does.
func (h *harness) result(q analytics.Query) analytics.Result {
	h.t.Helper()
	return analytics.AssembleQuery(h.answer(q, analytics.AllParts), q)
}

// expectQuery checks the store's answer to the query and the result
// assembled from it against analytics.CountAnswer and Aggregate, and
// returns the reference result.
func (h *harness) expectQuery(q analytics.Query) analytics.Result {
	h.t.Helper()
	want := analytics.Aggregate(h.ref, q)
	h.compare(q, analytics.AllParts, h.answer(q, analytics.AllParts), analytics.CountAnswer(h.ref, q, analytics.AllParts))
	if got := h.result(q); !reflect.DeepEqual(got, want) {
		h.t.Errorf("result of %+v:\n got       %+v\n reference %+v", q, got, want)
	}
	return want
}

// snapshot records what the store answers for a few selections, to prove
// later that a failed Append changed nothing.
func (h *harness) snapshot(sels []analytics.Selection) []any {
	h.t.Helper()
	var out []any
	for _, sel := range sels {
		c := h.answer(queryOf(sel), analytics.AllParts)
		out = append(out, c.Total)
		for _, d := range analytics.Dimensions {
			out = append(out, sortedGroups(c.Groups[d]))
		}
	}
	return out
}

// appendFailing appends a sequence that must fail, and checks that the
// store is unchanged afterwards.
func (h *harness) appendFailing(ctx context.Context, seq func(yield func(analytics.Interaction, error) bool)) (int, error) {
	h.t.Helper()
	sels := []analytics.Selection{{Cat: catAlpha}, {Cat: catBeta}}
	before := h.snapshot(sels)
	n, err := h.log.Append(ctx, seq)
	if err == nil {
		h.t.Fatalf("Append succeeded, want an error")
	}
	if n != 0 {
		h.t.Errorf("failed Append returned %d, want 0", n)
	}
	if after := h.snapshot(sels); !reflect.DeepEqual(after, before) {
		h.t.Errorf("failed Append changed the store:\n before %v\n after  %v", before, after)
	}
	for _, sel := range sels {
		h.expect(sel)
	}
	return n, err
}
