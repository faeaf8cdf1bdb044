package analytics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

func day(s string) time.Time {
	t, err := time.Parse(analytics.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		name, start, end string
		want             analytics.Range
		wantPrefix       string
	}{
		{name: "both empty is open", want: analytics.Range{}},
		{name: "start only", start: "2024-01-02", want: analytics.Range{Start: day("2024-01-02")}},
		{name: "end only", end: "2024-01-02", want: analytics.Range{End: day("2024-01-02")}},
		{name: "both", start: "2024-01-01", end: "2024-02-01", want: analytics.Range{Start: day("2024-01-01"), End: day("2024-02-01")}},
		{name: "bad start", start: "2024/01/01", wantPrefix: "Invalid startDate format. Expected YYYY-MM-DD: parsing time"},
		{name: "bad end", end: "yesterday", wantPrefix: "Invalid endDate format. Expected YYYY-MM-DD: parsing time"},
		{name: "month out of range", start: "2024-13-01", wantPrefix: "Invalid startDate format. Expected YYYY-MM-DD: parsing time \"2024-13-01\": month out of range"},
		{name: "datetime is not a date", start: "2024-01-01T00:00:00Z", wantPrefix: "Invalid startDate format. Expected YYYY-MM-DD: "},
		{name: "equal dates", start: "2024-01-01", end: "2024-01-01", wantPrefix: "startDate must be before endDate"},
		{name: "start after end", start: "2024-02-01", end: "2024-01-01", wantPrefix: "startDate must be before endDate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := analytics.ParseRange(tt.start, tt.end)
			if tt.wantPrefix != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantPrefix) {
					t.Fatalf("err = %v, want prefix %q", err, tt.wantPrefix)
				}
				if errs.KindOf(err) != errs.KindInvalid {
					t.Fatalf("kind = %v, want invalid", errs.KindOf(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Start.Equal(tt.want.Start) || !got.End.Equal(tt.want.End) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRangeContains(t *testing.T) {
	r := analytics.Range{Start: day("2024-01-01"), End: day("2024-01-02")}
	tests := []struct {
		name string
		at   time.Time
		want bool
	}{
		{"start is inclusive", day("2024-01-01"), true},
		{"last nanosecond inside", day("2024-01-02").Add(-time.Nanosecond), true},
		{"end is exclusive", day("2024-01-02"), false},
		{"before start", day("2024-01-01").Add(-time.Nanosecond), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Contains(tt.at); got != tt.want {
				t.Fatalf("Contains(%v) = %v", tt.at, got)
			}
		})
	}
	if !(analytics.Range{}).Contains(time.Unix(0, 0)) {
		t.Fatal("open range must contain everything")
	}
}

func TestSelectionMatches(t *testing.T) {
	base := analytics.Interaction{
		Time: day("2024-03-10"), Cat: "demo", EventKind: analytics.EventKindAPI,
		Question: "q", Answer: "a", Topic: "billing", Model: "m1", Persona: "p1",
	}.Normalize()
	tests := []struct {
		name string
		sel  analytics.Selection
		i    analytics.Interaction
		want bool
	}{
		{"no filter", analytics.Selection{Cat: "demo"}, base, true},
		{"other cat", analytics.Selection{Cat: "other"}, base, false},
		{"other event kind", analytics.Selection{Cat: "demo"}, func() analytics.Interaction { i := base; i.EventKind = "feedback"; return i }(), false},
		{"topic OR match", analytics.Selection{Cat: "demo", Filters: analytics.Filters{Topics: []string{"x", "billing"}}}, base, true},
		{"topic miss", analytics.Selection{Cat: "demo", Filters: analytics.Filters{Topics: []string{"x"}}}, base, false},
		{"filters AND", analytics.Selection{Cat: "demo", Filters: analytics.Filters{Topics: []string{"billing"}, Models: []string{"m2"}}}, base, false},
		{"question by derived id", analytics.Selection{Cat: "demo", Filters: analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID("q")}}}, base, true},
		{"answer by text is not an id", analytics.Selection{Cat: "demo", Filters: analytics.Filters{AnswerIDs: []string{"a"}}}, base, false},
		{"filter is case sensitive", analytics.Selection{Cat: "demo", Filters: analytics.Filters{Topics: []string{"Billing"}}}, base, false},
		{"out of range", analytics.Selection{Cat: "demo", Range: analytics.Range{End: day("2024-03-10")}}, base, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.Matches(tt.i); got != tt.want {
				t.Fatalf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFiltersWithout(t *testing.T) {
	f := analytics.Filters{Models: []string{"m"}, Personas: []string{"p"}, Topics: []string{"t"}, QuestionIDs: []string{"q"}, AnswerIDs: []string{"a"}}
	for _, d := range analytics.Dimensions {
		t.Run(d.String(), func(t *testing.T) {
			w := f.Without(d)
			for _, other := range analytics.Dimensions {
				got := len(w.Values(other))
				want := 1
				if other == d {
					want = 0
				}
				if got != want {
					t.Fatalf("Without(%v).Values(%v) has %d values, want %d", d, other, got, want)
				}
			}
		})
	}
	if f.IsZero() || !(analytics.Filters{}).IsZero() {
		t.Fatal("IsZero wrong")
	}
}
