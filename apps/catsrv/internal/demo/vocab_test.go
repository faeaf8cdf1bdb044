package demo

import (
	"strings"
	"testing"
)

func TestUniverse(t *testing.T) {
	u := theUniverse()
	distinct := func(texts []string) int {
		seen := map[string]bool{}
		for _, s := range texts {
			seen[s] = true
		}
		return len(seen)
	}
	var qs []string
	for _, q := range u.questions {
		qs = append(qs, q.text)
		if strings.Contains(q.text, "{") {
			t.Errorf("unfilled template: %q", q.text)
		}
		if q.answer/answersPerTopic != q.topic {
			t.Errorf("question %q (topic %s) usually gets an answer of another topic", q.text, topics[q.topic])
		}
	}
	if got := distinct(qs); got != questionCount {
		t.Errorf("%d distinct questions, want %d", got, questionCount)
	}
	if got := distinct(u.answers); got != answerCount || len(u.answers) != answerCount {
		t.Errorf("%d distinct answers of %d, want %d", got, len(u.answers), answerCount)
	}
	if len(vocab) != len(topics) {
		t.Errorf("%d vocabularies for %d topics", len(vocab), len(topics))
	}
}
