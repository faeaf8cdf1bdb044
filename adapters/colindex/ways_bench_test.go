package colindex_test

import (
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

// BenchmarkWays measures each shortcut of the index's list counts against
// the plain way (a scan of the range's rows) on the case it is for, over
// demo-shaped rows (1M by default in two CATs, COLINDEX_BENCH_ROWS),
// after checking that both give the same list. A shortcut stays only if
// it earns at least 2x here.
func BenchmarkWays(b *testing.B) {
	idx := scaleIndex(b)
	end := benchStart.AddDate(1, 0, 0)
	at := func(days int) analytics.Range { // days before the end, not at midnight
		return analytics.Range{Start: end.AddDate(0, 0, -days).Add(7 * 3600e9), End: end.Add(-5 * 3600e9)}
	}
	cases := []struct {
		name  string
		way   string
		rng   analytics.Range
		d     analytics.Dimension
		limit int
	}{
		{"AllTopics", "totals", analytics.Range{}, analytics.Topic, 0},
		{"AllQuestions", "totals", analytics.Range{}, analytics.Question, 0},
		{"AllQuestionsLimit100", "totals", analytics.Range{}, analytics.Question, 100},
		{"30DaysTopics", "cube", analytics.Range{Start: end.AddDate(0, 0, -30), End: end}, analytics.Topic, 0},
		{"300DaysTopics", "cube", analytics.Range{Start: end.AddDate(0, 0, -300), End: end}, analytics.Topic, 0},
		{"300DaysAnswers", "complement", at(300), analytics.Answer, 0},
		{"300DaysQuestions", "complement", at(300), analytics.Question, 0},
		{"300DaysTopicsNotWholeDays", "complement", at(300), analytics.Topic, 0},
		{"OneQuestionTopics", "postings", analytics.Range{}, analytics.Topic, 0},
		{"TwoModelsPersonaQuestions", "comboLists", analytics.Range{}, analytics.Question, 0},
		{"TwoModelsPersonaAnswers", "comboLists", analytics.Range{}, analytics.Answer, 0},
		{"180DaysQuestionsTop100", "top", at(180), analytics.Question, 100},
		{"AllQuestionsTop100", "top", analytics.Range{}, analytics.Question, 100},
	}
	oneQuestion := analytics.Filters{QuestionIDs: []string{string(hexID("q-", 1))}}
	for _, c := range cases {
		sel := analytics.Selection{Cat: "support", Range: c.rng}
		switch c.way {
		case "postings":
			sel.Filters = oneQuestion
		case "comboLists":
			sel.Filters = analytics.Filters{Models: []string{"gpt-4o", "claude-3-5-sonnet"}, Personas: []string{"persona-1"}}
		}
		base := "scan"
		plain, _ := idx.CountWay(base, sel, c.d, c.limit)
		got, ok := idx.CountWay(c.way, sel, c.d, c.limit)
		if !ok || !slices.Equal(got, plain) {
			b.Fatalf("%s: %s gives %d groups (applies %v), the plain way %d", c.name, c.way, len(got), ok, len(plain))
		}
		for _, way := range []string{c.way, base} {
			label := "shortcut"
			if way == base {
				label = "plain"
			}
			b.Run(c.way+"/"+c.name+"/way="+label, func(b *testing.B) {
				for b.Loop() {
					idx.CountWay(way, sel, c.d, c.limit)
				}
			})
		}
	}
}
