package colindex_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestLateRows appends batches whose rows are older than the newest of
// their CAT (inserted in place, or sorted in when many) and checks every
// query path against the reference after each step: slices of the time
// column, posting lists, the per-day cube and the running totals.
func TestLateRows(t *testing.T) {
	day := time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	// row k has a rare question (selective enough for the posting lists)
	// when k is a multiple of 23, a rare answer of 29.
	row := func(cat string, at time.Time, k int) analytics.Interaction {
		i := analytics.Interaction{
			Time: at, Cat: cat, EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("question %d", k%7), QuestionID: fmt.Sprintf("q-%d", k%7),
			Answer: fmt.Sprintf("answer %d", k%5), Topic: []string{"a", "b", "c"}[k%3],
			Model: []string{"m1", "m2"}[k%2], Persona: fmt.Sprintf("p%d", k%4),
		}
		if k%23 == 0 {
			i.Question, i.QuestionID = "rare question", "q-rare"
		}
		if k%29 == 0 {
			i.Answer = "rare answer"
		}
		return i
	}
	// series returns n rows of cat from start, one every step.
	series := func(cat string, start time.Time, step time.Duration, n, seed int) []analytics.Interaction {
		out := make([]analytics.Interaction, n)
		for k := range out {
			out[k] = row(cat, start.Add(time.Duration(k)*step), seed+k)
		}
		return out
	}
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	steps := []struct {
		name string
		rows []analytics.Interaction
	}{
		{"into an empty CAT, out of order", []analytics.Interaction{
			row("a", day.Add(5*time.Hour), 1), row("a", day.Add(2*time.Hour), 2), row("a", day.Add(3*time.Hour), 3)}},
		{"in order", series("a", day.Add(6*time.Hour), 7*time.Minute, 300, 10)},
		{"a run of the rare question", []analytics.Interaction{
			row("a", day.Add(6*time.Hour+300*7*time.Minute), 23), row("a", day.Add(6*time.Hour+301*7*time.Minute), 46),
			row("a", day.Add(6*time.Hour+302*7*time.Minute), 69)}},
		{"a second CAT", series("b", day, 13*time.Minute, 200, 20)},
		{"late by a day", []analytics.Interaction{row("a", day.Add(-18*time.Hour), 30)}},
		{"late by a microsecond", []analytics.Interaction{
			row("a", day.Add(6*time.Hour+299*7*time.Minute-time.Microsecond), 31)}},
		{"equal to the newest and to a middle row", []analytics.Interaction{
			row("a", day.Add(6*time.Hour+299*7*time.Minute), 32), row("a", day.Add(6*time.Hour+70*time.Minute), 33),
			row("a", day.Add(6*time.Hour+70*time.Minute), 34)}},
		{"before the first row", []analytics.Interaction{row("a", day.AddDate(0, 0, -3), 35)}},
		{"late rows in two CATs, new values", []analytics.Interaction{
			row("b", day.Add(time.Hour), 36), row("a", day.Add(7*time.Hour), 37),
			{Time: day.Add(8 * time.Hour), Cat: "a", EventKind: analytics.EventKindAPI, Question: "new", QuestionID: "q-new",
				Answer: "new answer", Topic: "z", Model: "m9", Persona: "p9"}, row("b", day.Add(2*time.Hour), 38)}},
		{"a late batch larger than the CAT", series("b", day.AddDate(0, 0, -2), 3*time.Minute, 900, 40)},
		{"late again after the re-sort", series("b", day.AddDate(0, 0, -1), 31*time.Minute, 20, 50)},
		{"new newest rows", series("a", day.AddDate(0, 0, 2), time.Minute, 30, 60)},
		// Refreshes of thousands of rows of a CAT, newer and late.
		{"a bulk of newer rows, new values", withNew(series("a", day.AddDate(0, 0, 3), 10*time.Second, 5000, 70), "bulk a")},
		{"a late bulk, new values", withNew(series("b", day.AddDate(0, 0, -1).Add(17*time.Second), 37*time.Second, 5000, 80), "bulk b")},
		{"late after the bulk", []analytics.Interaction{row("b", day.Add(9*time.Hour), 90)}},
		// Rows spread over the CAT's days, which one at a time would
		// move more rows than the CAT has: appended and sorted once.
		{"a small late batch across the CAT, new values", withNew(series("a", day.Add(-20*time.Hour), 97*time.Minute, 60, 95), "spread a")},
	}
	ranges := map[string]analytics.Range{
		"open": {}, "whole day": {Start: day, End: day.AddDate(0, 0, 1)},
		"from the day": {Start: day}, "to the day": {End: day},
		"not whole days": {Start: day.Add(150 * time.Minute), End: day.Add(31 * time.Hour)},
	}
	rareAnswer := analytics.Interaction{Answer: "rare answer"}.Normalize().AnswerID
	filters := map[string]analytics.Filters{
		"none": {}, "question": {QuestionIDs: []string{"q-3"}}, "new question": {QuestionIDs: []string{"q-new"}},
		"rare question":            {QuestionIDs: []string{"q-rare"}},
		"rare question and answer": {QuestionIDs: []string{"q-rare", "q-new"}, AnswerIDs: []string{rareAnswer}},
		"rare answer and topic":    {AnswerIDs: []string{rareAnswer}, Topics: []string{"b"}},
		"question and persona":     {QuestionIDs: []string{"q-1", "q-2"}, Personas: []string{"p1", "p9"}},
		"answer":                   {AnswerIDs: []string{analytics.Interaction{Answer: "answer 4"}.Normalize().AnswerID}},
		"persona":                  {Personas: []string{"p2"}}, "topic and model": {Topics: []string{"a", "z"}, Models: []string{"m1"}},
		"bulk topic and a new question": {Topics: []string{"bulk a", "bulk b"},
			QuestionIDs: []string{analytics.Interaction{Question: "bulk a question 1000"}.Normalize().QuestionID}},
	}
	for _, s := range steps {
		if _, err := log.Append(t.Context(), analytics.Each(s.rows)); err != nil {
			t.Fatalf("%s: Append: %v", s.name, err)
		}
		for _, cat := range []string{"a", "b"} {
			for rn, rng := range ranges {
				for fn, f := range filters {
					sel := analytics.Selection{Cat: cat, Range: rng, Filters: f}
					checkAgainstReference(t, fmt.Sprintf("%s: %s/%s/%s", s.name, cat, rn, fn), idx, m.rows, sel)
				}
			}
		}
	}
}

// withNew gives every 50th row a question and answer new to the index
// and every 1000th a new topic, named after tag.
func withNew(rows []analytics.Interaction, tag string) []analytics.Interaction {
	for k := range rows {
		if k%50 == 0 {
			rows[k].Question, rows[k].QuestionID = fmt.Sprintf("%s question %d", tag, k), ""
			rows[k].Answer = fmt.Sprintf("%s answer %d", tag, k/100)
		}
		if k%1000 == 0 {
			rows[k].Topic = tag
		}
	}
	return rows
}

// checkAgainstReference compares the index's answers, without a limit
// and with a limit of 2, with the reference aggregation.
func checkAgainstReference(t *testing.T, name string, idx *colindex.Index, rows []analytics.Interaction, sel analytics.Selection) {
	t.Helper()
	for _, limit := range []int{0, 2} {
		expectAnswer(t, name, idx, rows, sel, limit)
	}
}
