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
// that open creates. Expected counts come from the core reference,
// analytics.CountTotal, CountGroups and Aggregate, over the same input.
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newHarness(t, open))
		})
	}
	t.Run("Property", func(t *testing.T) { testProperty(t, open) })
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

// total is the store's Total, failing the test on error.
func (h *harness) total(sel analytics.Selection) int64 {
	h.t.Helper()
	n, err := h.read.Total(h.t.Context(), sel)
	if err != nil {
		h.t.Fatalf("Total(%+v): %v", sel, err)
	}
	return n
}

// groups is the store's Groups, sorted, failing the test on error.
func (h *harness) groups(sel analytics.Selection, d analytics.Dimension) []analytics.Group {
	h.t.Helper()
	g, err := h.read.Groups(h.t.Context(), sel, d)
	if err != nil {
		h.t.Fatalf("Groups(%+v, %v): %v", sel, d, err)
	}
	analytics.SortGroups(g)
	return g
}

// expect checks the store's Total and every dimension's Groups for the
// selection against the reference, and returns the reference total.
func (h *harness) expect(sel analytics.Selection) int64 {
	h.t.Helper()
	want := analytics.CountTotal(h.ref, sel)
	if got := h.total(sel); got != want {
		h.t.Errorf("Total(%+v) = %d, reference %d", sel, got, want)
	}
	for _, d := range analytics.Dimensions {
		wantGroups := analytics.CountGroups(h.ref, sel, d)
		analytics.SortGroups(wantGroups)
		if got := h.groups(sel, d); !slices.Equal(got, wantGroups) {
			h.t.Errorf("Groups(%+v, %v):\n got       %v\n reference %v", sel, d, got, wantGroups)
		}
		h.expectTop(sel, d, wantGroups)
	}
	return want
}

// expectTop checks TopGroups, when the store offers it, against the
// sorted reference cut at several sizes, ties at the cut included.
func (h *harness) expectTop(sel analytics.Selection, d analytics.Dimension, sorted []analytics.Group) {
	h.t.Helper()
	top, ok := h.read.(ports.TopAggregator)
	if !ok {
		return
	}
	for _, n := range []int{1, 2, 3, len(sorted), len(sorted) + 1} {
		if n < 1 {
			continue
		}
		got, err := top.TopGroups(h.t.Context(), sel, d, n)
		if err != nil {
			h.t.Fatalf("TopGroups(%+v, %v, %d): %v", sel, d, n, err)
		}
		want := sorted[:min(n, len(sorted))]
		if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
			h.t.Errorf("TopGroups(%+v, %v, %d):\n got       %v\n reference %v", sel, d, n, got, want)
		}
	}
}

// result assembles the query's result from the store's counts, as the
// reporter does.
func (h *harness) result(q analytics.Query) analytics.Result {
	h.t.Helper()
	c := analytics.Counts{Total: h.total(q.Selection()), Groups: map[analytics.Dimension][]analytics.Group{}}
	for _, d := range analytics.Dimensions {
		c.Groups[d] = h.groups(q.SelectionFor(d), d)
	}
	return analytics.Assemble(c, q.Limit)
}

// expectQuery checks the assembled result against analytics.Aggregate and
// returns the reference result.
func (h *harness) expectQuery(q analytics.Query) analytics.Result {
	h.t.Helper()
	want := analytics.Aggregate(h.ref, q)
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
		out = append(out, h.total(sel))
		for _, d := range analytics.Dimensions {
			out = append(out, h.groups(sel, d))
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
