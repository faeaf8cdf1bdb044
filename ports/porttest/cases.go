package porttest

import (
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

func testEmptyStore(t *testing.T, h *harness) {
	n, err := h.log.Append(t.Context(), analytics.Each(nil))
	if err != nil || n != 0 {
		t.Fatalf("Append(nothing) = %d, %v; want 0, nil", n, err)
	}
	for _, sel := range []analytics.Selection{
		{Cat: catAlpha},
		{Cat: catAlpha, Range: analytics.Range{Start: day(0), End: day(1)}},
		{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"account"}}},
	} {
		if got := h.total(sel); got != 0 {
			t.Errorf("total of %+v = %d on an empty store", sel, got)
		}
		for _, d := range analytics.Dimensions {
			if got := h.groups(sel, d); len(got) != 0 {
				t.Errorf("list %v of %+v = %v on an empty store", d, sel, got)
			}
		}
	}
	if got := h.expectQuery(analytics.Query{Cat: catAlpha}); got.TotalInteractions != 0 || len(got.TopicCounts) != 0 {
		t.Errorf("reference result of an empty log = %+v", got)
	}
}

func testAppendReturnsCount(t *testing.T, h *harness) {
	log := mixedLog()
	h.append(log...) // checks the count of every kind, not only api
	h.append(log[:3]...)
	if got := h.expect(analytics.Selection{Cat: catAlpha}); got != 8+3 {
		t.Errorf("reference total = %d, hand count 11", got)
	}
}

func testNonAPIKindsIgnored(t *testing.T, h *harness) {
	base := event(day(0).Add(time.Hour), "account", "model-a", "student", "Hi?", "Hello.")
	h.append(
		base,
		withKind(base, "feedback"),
		withKind(base, "API"),
		withKind(base, "api "),
		withKind(base, " api"),
		withKind(base, "apix"),
		withKind(base, "system"),
	)
	if got := h.expect(analytics.Selection{Cat: catAlpha}); got != 1 {
		t.Errorf("reference total = %d, hand count 1", got)
	}
	h.expectQuery(analytics.Query{Cat: catAlpha})
}

func testRangeBounds(t *testing.T, h *harness) {
	plus2, err := time.LoadLocation("Etc/GMT-2") // UTC+2
	if err != nil {
		plus2 = time.FixedZone("UTC+2", 2*60*60)
	}
	at := func(t time.Time) analytics.Interaction {
		return event(t, "account", "model-a", "student", "When?", "Now.")
	}
	h.append(
		at(day(0).Add(-time.Microsecond)),         // last microsecond before day 0
		at(day(0)),                                // exactly midnight: in day 0
		at(day(0).Add(12*time.Hour)),              // midday
		at(day(1).Add(-time.Nanosecond)),          // last nanosecond of day 0
		at(day(1)),                                // exactly midnight: in day 1
		at(day(1).Add(-30*time.Minute).In(plus2)), // day 0 in UTC, day 1 in local time
		at(day(2).Add(time.Microsecond)),          // day 2
	)
	cases := []struct {
		name       string
		start, end time.Time
		hand       int64 // hand-checked count, -1 when only the reference decides
	}{
		{"DayZero", day(0), day(1), 4},
		{"DayOne", day(1), day(2), 1},
		{"OpenStart", time.Time{}, day(1), 5},
		{"OpenEnd", day(1), time.Time{}, 2},
		{"Open", time.Time{}, time.Time{}, 7},
		{"TwoDays", day(0), day(2), 5},
		{"BeforeEverything", day(-10), day(-1), 0},
		{"AfterEverything", day(3), time.Time{}, 0},
		{"StartEqualsEnd", day(1), day(1), 0},
		{"StartAfterEnd", day(2), day(0), 0},
		{"EndAtFirstMidnight", time.Time{}, day(0), 1},
		{"StartAtLastDay", day(2), day(3), 1},
		{"WideRange", day(-400), day(400), -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.in(t)
			got := h.expect(analytics.Selection{Cat: catAlpha, Range: analytics.Range{Start: c.start, End: c.end}})
			if c.hand >= 0 && got != c.hand {
				t.Errorf("reference total = %d, hand count %d", got, c.hand)
			}
		})
	}
}

func testEachFilter(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	log := mixedLog()
	present := map[analytics.Dimension][]string{}
	for _, i := range log {
		for _, d := range analytics.Dimensions {
			present[d] = append(present[d], i.Normalize().Key(d))
		}
	}
	for _, d := range analytics.Dimensions {
		vals := append(present[d], "absent", "")
		slices.Sort(vals)
		for _, v := range slices.Compact(vals) {
			t.Run(d.String()+"="+v, func(t *testing.T) {
				h := h.in(t)
				h.expect(analytics.Selection{Cat: catAlpha, Filters: filterOf(d, v)})
			})
		}
	}
	if got := h.expect(analytics.Selection{Cat: catAlpha, Filters: analytics.Filters{Models: []string{"model-a"}}}); got != 4 {
		t.Errorf("reference total for model-a = %d, hand count 4", got)
	}
}

// filterOf returns filters with one dimension filtered by the values.
func filterOf(d analytics.Dimension, vals ...string) analytics.Filters {
	var f analytics.Filters
	switch d {
	case analytics.Topic:
		f.Topics = vals
	case analytics.Model:
		f.Models = vals
	case analytics.Persona:
		f.Personas = vals
	case analytics.Question:
		f.QuestionIDs = vals
	case analytics.Answer:
		f.AnswerIDs = vals
	}
	return f
}

func testOrWithinAndAcross(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	cases := []struct {
		name    string
		filters analytics.Filters
		hand    int64
	}{
		{"TwoTopics", analytics.Filters{Topics: []string{"account", "billing"}}, 6},
		{"TwoTopicsOneModel", analytics.Filters{Topics: []string{"account", "billing"}, Models: []string{"model-a"}}, 3},
		{"TwoModelsTwoPersonas", analytics.Filters{Models: []string{"model-a", "model-b"}, Personas: []string{"student", "teacher"}}, 5},
		{"RepeatedValue", analytics.Filters{Topics: []string{"account", "account"}}, 3},
		{"PresentAndAbsent", analytics.Filters{Topics: []string{"nothing", "shipping"}}, 2},
		{"AllFive", analytics.Filters{
			Topics: []string{"account", "shipping"}, Models: []string{"model-a", "model-c"},
			Personas:    []string{"student"},
			QuestionIDs: []string{analytics.DeriveQuestionID("How do I reset my password?"), analytics.DeriveQuestionID("Where is my parcel?")},
			AnswerIDs:   []string{analytics.DeriveAnswerID("Use the reset link."), analytics.DeriveAnswerID("It ships tomorrow."), analytics.DeriveAnswerID("Yes, within 30 days.")},
		}, 3},
		{"Contradiction", analytics.Filters{Topics: []string{"account"}, Personas: []string{"admin"}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.in(t)
			if got := h.expect(analytics.Selection{Cat: catAlpha, Filters: c.filters}); got != c.hand {
				t.Errorf("reference total = %d, hand count %d", got, c.hand)
			}
		})
	}
}

func testSelectiveFiltering(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	queries := []struct {
		name string
		q    analytics.Query
	}{
		{"NoFilter", analytics.Query{Cat: catAlpha}},
		{"Topic", analytics.Query{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"billing"}}}},
		{"ModelAndPersona", analytics.Query{Cat: catAlpha, Filters: analytics.Filters{Models: []string{"model-a"}, Personas: []string{"student", "admin"}}}},
		{"QuestionAndAnswer", analytics.Query{Cat: catAlpha, Filters: analytics.Filters{
			QuestionIDs: []string{analytics.DeriveQuestionID("Where is my parcel?")},
			AnswerIDs:   []string{analytics.DeriveAnswerID("It ships tomorrow.")},
		}}},
		{"RangeAndFilters", analytics.Query{Cat: catAlpha, Range: analytics.Range{Start: day(1)}, Filters: analytics.Filters{Topics: []string{"billing"}, Models: []string{"model-b"}}}},
		{"Limit", analytics.Query{Cat: catAlpha, Limit: 1}},
		{"Window", analytics.Query{Cat: catAlpha, Limit: 1, Window: analytics.Window{Paged: true, Offset: 1, Search: "E"}}},
		{"WindowSearchOnly", analytics.Query{Cat: catAlpha, Window: analytics.Window{Paged: true, Search: "parcel"}}},
	}
	for _, c := range queries {
		t.Run(c.name, func(t *testing.T) { h.in(t).expectQuery(c.q) })
	}
	// The reference itself: a topic filter leaves topic_counts whole but
	// narrows everything else.
	res := analytics.Aggregate(h.ref, queries[1].q)
	if len(res.TopicCounts) != 3 || res.TotalInteractions != 3 || len(res.ModelCounts) != 2 {
		t.Errorf("reference result for topic=billing = %+v, hand: 3 topics, total 3, 2 models", res)
	}
}

func testGivenAndDerivedIDs(t *testing.T, h *harness) {
	const text, variant = "What is X?", "What is X ?"
	derived := event(day(0).Add(time.Hour), "account", "model-a", "student", text, "X is Y.")
	given := withIDs(derived, "Q-1", "A-1")
	sameIDOtherText := given
	sameIDOtherText.Question, sameIDOtherText.Answer = variant, "X is Z."
	h.append(derived, given, sameIDOtherText, derived)

	if got := h.groups(analytics.Selection{Cat: catAlpha}, analytics.Question); len(got) != 3 {
		t.Errorf("question groups = %v, want 3: (derived, text), (Q-1, text), (Q-1, variant)", got)
	}
	cases := []struct {
		name string
		f    analytics.Filters
		hand int64
	}{
		{"DerivedQuestionID", analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID(text)}}, 2},
		{"GivenQuestionID", analytics.Filters{QuestionIDs: []string{"Q-1"}}, 2},
		{"GivenAnswerID", analytics.Filters{AnswerIDs: []string{"A-1"}}, 2},
		{"DerivedAnswerID", analytics.Filters{AnswerIDs: []string{analytics.DeriveAnswerID("X is Y.")}}, 2},
		{"IDOfUnstoredText", analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID(variant)}}, 0},
		{"IDsAreCaseSensitive", analytics.Filters{QuestionIDs: []string{"q-1"}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.in(t)
			if got := h.expect(analytics.Selection{Cat: catAlpha, Filters: c.f}); got != c.hand {
				t.Errorf("reference total = %d, hand count %d", got, c.hand)
			}
		})
	}

	t.Run("SameTextSameIDAcrossStores", func(t *testing.T) {
		h := h.in(t)
		other := newHarness(t, h.open)
		other.append(derived)
		want := []analytics.Group{{Key: analytics.DeriveQuestionID(text), Text: text, Count: 1}}
		if got := other.groups(analytics.Selection{Cat: catAlpha}, analytics.Question); len(got) != 1 || got[0] != want[0] {
			t.Errorf("question groups in a second store = %v, want %v", got, want)
		}
		filtered := analytics.Selection{Cat: catAlpha, Filters: analytics.Filters{QuestionIDs: []string{want[0].Key}}}
		if a, b := h.total(filtered), other.total(filtered); a != 2 || b != 1 {
			t.Errorf("filter by derived id: first store %d (want 2), second %d (want 1)", a, b)
		}
	})
}

func testCatsIsolated(t *testing.T, h *harness) {
	log := mixedLog()
	h.append(log...)
	h.append(withCat(log[0], catBeta), withCat(log[2], catBeta))
	for _, cat := range []string{catAlpha, catBeta, "Alpha", "alpha ", "gamma", ""} {
		t.Run("cat="+cat, func(t *testing.T) {
			h := h.in(t)
			h.expect(analytics.Selection{Cat: cat})
			h.expectQuery(analytics.Query{Cat: cat, Filters: analytics.Filters{Topics: []string{"account"}}})
		})
	}
	if got := analytics.CountTotal(h.ref, analytics.Selection{Cat: catBeta}); got != 2 {
		t.Errorf("reference total of beta = %d, hand count 2", got)
	}
}
