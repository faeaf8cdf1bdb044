package colindex_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestLongRanges covers the unfiltered long ranges whose question and
// answer lists are counted from the posting lists' tables (a range of
// most or half of the CAT: start only, end only, the middle, bounds
// inside a day) and the lists cut to a limit below the number of groups,
// ties at the cut included, against the reference. The rows, 6,000 a
// round over ten days, have 40 question ids (plus one-off questions, one
// row each) and 5 answers: few codes for many rows, as the demo's.
func TestLongRanges(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	r := rand.New(rand.NewPCG(21, 22))
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for round := range 3 {
		rows := make([]analytics.Interaction, 6000)
		for k := range rows {
			q := r.IntN(40)
			rows[k] = analytics.Interaction{
				Time: day.Add(time.Duration(r.IntN(10*24*60)) * time.Minute), Cat: "c", EventKind: analytics.EventKindAPI,
				Question: fmt.Sprintf("question %d", q%25), QuestionID: fmt.Sprintf("q-%d", q),
				Answer: fmt.Sprintf("answer %d", r.IntN(5)), Topic: []string{"b", "a", "c"}[r.IntN(3)],
				Model: "m", Persona: fmt.Sprintf("p%d", r.IntN(3)),
			}
			if k%40 == 0 {
				rows[k].Question, rows[k].QuestionID = fmt.Sprintf("one-off %d/%d", round, k), fmt.Sprintf("q-once-%d-%d", round, k)
			}
		}
		if _, err := log.Append(t.Context(), analytics.Each(rows)); err != nil {
			t.Fatalf("Append: %v", err)
		}
		ranges := map[string]analytics.Range{
			"start only":          {Start: day.AddDate(0, 0, 5)},
			"end only":            {End: day.AddDate(0, 0, 5)},
			"start inside a day":  {Start: day.Add(52*time.Hour + 17*time.Minute)},
			"end inside a day":    {End: day.Add(190*time.Hour + 3*time.Minute)},
			"middle":              {Start: day.AddDate(0, 0, 2), End: day.AddDate(0, 0, 8)},
			"middle, inside days": {Start: day.Add(30 * time.Hour), End: day.Add(200 * time.Hour)},
			"before the rows":     {End: day.AddDate(0, 0, 30)},
		}
		for name, rng := range ranges {
			sel := analytics.Selection{Cat: "c", Range: rng}
			for _, limit := range []int{0, 1, 3, 30, 100} {
				expectAnswer(t, fmt.Sprintf("round %d, %s", round, name), idx, m.rows, sel, limit)
			}
		}
	}
}

// TestComboFiltersWholeCAT covers the question and answer lists of a
// topic, model or persona filter over the whole CAT, asked three times
// after each append, with rows appended in and out of time order
// between, against the reference.
func TestComboFiltersWholeCAT(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	r := rand.New(rand.NewPCG(23, 24))
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	filters := map[string]analytics.Filters{
		"two topics":         {Topics: []string{"a", "c"}},
		"persona and topic":  {Personas: []string{"p1"}, Topics: []string{"b"}},
		"models and persona": {Models: []string{"m", "n"}, Personas: []string{"p0", "p2"}},
		"unknown persona":    {Personas: []string{"p9"}},
	}
	for round := range 4 {
		rows := make([]analytics.Interaction, 1500)
		for k := range rows {
			q := r.IntN(30)
			rows[k] = analytics.Interaction{
				Time: day.Add(time.Duration(r.IntN(10*24*60)) * time.Minute), Cat: "c", EventKind: analytics.EventKindAPI,
				Question: fmt.Sprintf("question %d", q%20), QuestionID: fmt.Sprintf("q-%d", q),
				Answer: fmt.Sprintf("answer %d", r.IntN(6)), Topic: []string{"b", "a", "c"}[r.IntN(3)],
				Model: []string{"m", "n", "o"}[r.IntN(3)], Persona: fmt.Sprintf("p%d", r.IntN(3)),
			}
			if k%10 == 0 {
				rows[k].Question, rows[k].QuestionID = fmt.Sprintf("one-off %d/%d", round, k), fmt.Sprintf("q-once-%d-%d", round, k)
				rows[k].Answer = fmt.Sprintf("one-off answer %d/%d", round, k)
			}
		}
		if _, err := log.Append(t.Context(), analytics.Each(rows)); err != nil {
			t.Fatalf("Append: %v", err)
		}
		for ask := range 3 {
			for name, f := range filters {
				sel := analytics.Selection{Cat: "c", Filters: f}
				for _, limit := range []int{0, 4} {
					expectAnswer(t, fmt.Sprintf("round %d, ask %d, %s", round, ask, name), idx, m.rows, sel, limit)
				}
			}
		}
	}
}
