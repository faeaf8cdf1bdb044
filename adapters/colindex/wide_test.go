package colindex_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestWideCodes grows a CAT past 256 (topic, model, persona) combinations
// and 65536 questions, so that its code columns widen while it holds rows,
// late rows among them, and checks the query paths against the reference.
func TestWideCodes(t *testing.T) {
	day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	row := func(k int, at time.Time) analytics.Interaction {
		return analytics.Interaction{
			Time: at, Cat: "wide", EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("question %d", k), QuestionID: fmt.Sprintf("q-%d", k),
			Answer: fmt.Sprintf("answer %d", k%300), Topic: fmt.Sprintf("t%d", k%7),
			Model: fmt.Sprintf("m%d", k%5), Persona: fmt.Sprintf("p%d", k%11),
		}
	}
	m := newMemLog()
	log := refreshingLog{InteractionLog: m, Index: build(t, m)}
	batch := func(from, n int, at func(k int) time.Time) []analytics.Interaction {
		out := make([]analytics.Interaction, n)
		for k := range out {
			out[k] = row(from+k, at(from+k))
		}
		return out
	}
	steps := []struct {
		name string
		rows []analytics.Interaction
	}{
		{"narrow", batch(0, 200, func(k int) time.Time { return day.Add(time.Duration(k) * time.Minute) })},
		{"past a byte of combinations and answers, late", batch(200, 800, func(k int) time.Time {
			return day.Add(-time.Duration(k) * time.Second)
		})},
		{"past two bytes of questions", batch(1000, 70_000, func(k int) time.Time {
			return day.AddDate(0, 0, 1).Add(time.Duration(k) * time.Second)
		})},
		{"late again", batch(71_000, 50, func(k int) time.Time { return day.Add(time.Duration(k) * time.Millisecond) })},
	}
	selections := map[string]analytics.Selection{
		"all":        {Cat: "wide"},
		"first day":  {Cat: "wide", Range: analytics.Range{Start: day, End: day.AddDate(0, 0, 1)}},
		"part of it": {Cat: "wide", Range: analytics.Range{Start: day.Add(90 * time.Minute), End: day.Add(26 * time.Hour)}},
		"persona and model": {Cat: "wide", Filters: analytics.Filters{
			Personas: []string{"p3"}, Models: []string{"m1", "m4"}}},
		"questions": {Cat: "wide", Filters: analytics.Filters{QuestionIDs: []string{"q-70500", "q-12", "q-250"}}},
	}
	for _, s := range steps {
		if _, err := log.Append(t.Context(), analytics.Each(s.rows)); err != nil {
			t.Fatalf("%s: Append: %v", s.name, err)
		}
		for name, sel := range selections {
			checkAgainstReference(t, s.name+": "+name, log.Index, m.rows, sel)
		}
	}
}
