package analytics_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

func answerLog() []analytics.Interaction {
	at := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	ev := func(topic, model, q string) analytics.Interaction {
		return analytics.Interaction{Time: at, Cat: "demo", EventKind: "api", Topic: topic, Model: model, Persona: "p", Question: q, Answer: "A"}.Normalize()
	}
	return []analytics.Interaction{
		ev("billing", "m1", "Q1"), ev("billing", "m1", "Q1"), ev("billing", "m2", "Q2"),
		ev("shipping", "m1", "Q3"), ev("shipping", "m2", "Q3"), ev("returns", "m2", "Q4"),
	}
}

// TestCountAnswerAppliesSelectiveFiltering: the total applies every
// filter; each list every filter but its own.
func TestCountAnswerAppliesSelectiveFiltering(t *testing.T) {
	log := answerLog()
	q := analytics.Query{Cat: "demo", Filters: analytics.Filters{Topics: []string{"billing"}, Models: []string{"m1"}}}
	c := analytics.CountAnswer(log, q, analytics.AllParts)
	if c.Total != 2 {
		t.Errorf("total = %d, want 2", c.Total)
	}
	for _, d := range analytics.Dimensions {
		want := analytics.CountGroups(log, q.SelectionFor(d), d)
		if !sameGroups(c.Groups[d], want) {
			t.Errorf("list %v = %v, want %v", d, c.Groups[d], want)
		}
	}
	topics := c.Groups[analytics.Topic]
	analytics.SortGroups(topics)
	if len(topics) != 2 || topics[0] != (analytics.Group{Key: "billing", Text: "billing", Count: 2}) ||
		topics[1] != (analytics.Group{Key: "shipping", Text: "shipping", Count: 1}) {
		t.Errorf("the topic list ignores the topic filter only: %v", topics)
	}
}

// TestCountAnswerWantedPartsOnly: parts not wanted are left zero, and the
// wanted ones equal those of the whole answer.
func TestCountAnswerWantedPartsOnly(t *testing.T) {
	log := answerLog()
	q := analytics.Query{Cat: "demo", Filters: analytics.Filters{Models: []string{"m2"}}, Limit: 1}
	all := analytics.CountAnswer(log, q, analytics.AllParts)
	if got := analytics.CountAnswer(log, q, analytics.PartTotal); got.Total != all.Total || len(got.Groups) != 0 {
		t.Errorf("total only: %+v", got)
	}
	for _, d := range analytics.Dimensions {
		got := analytics.CountAnswer(log, q, analytics.ListOf(d))
		if got.Total != 0 || len(got.Groups) != 1 || !sameGroups(got.Groups[d], all.Groups[d]) {
			t.Errorf("list %v only: %+v, whole answer's %v", d, got, all.Groups[d])
		}
	}
}

// TestCountAnswerLimit: with a limit, the question and answer lists are
// the first Limit groups in list order; the others are whole.
func TestCountAnswerLimit(t *testing.T) {
	log := answerLog()
	q := analytics.Query{Cat: "demo", Limit: 2}
	c := analytics.CountAnswer(log, q, analytics.AllParts)
	whole := analytics.CountGroups(log, q.SelectionFor(analytics.Question), analytics.Question)
	analytics.SortGroups(whole)
	if !slices.Equal(c.Groups[analytics.Question], whole[:2]) {
		t.Errorf("questions = %v, want %v", c.Groups[analytics.Question], whole[:2])
	}
	if len(c.Groups[analytics.Answer]) != 1 || len(c.Groups[analytics.Topic]) != 3 {
		t.Errorf("answers %v (one answer text), topics %v (never cut)", c.Groups[analytics.Answer], c.Groups[analytics.Topic])
	}
	if got, want := analytics.Assemble(c, q.Limit), analytics.Aggregate(log, q); !reflect.DeepEqual(got, want) {
		t.Errorf("Assemble(CountAnswer) = %+v, Aggregate %+v", got, want)
	}
}

// TestStorableOnly: unstorable values are dropped; a filter left with no
// value empties every part but its own list, which then ignores it.
func TestStorableOnly(t *testing.T) {
	q := analytics.Query{Cat: "demo", Filters: analytics.Filters{Topics: []string{"bad\x00", "billing"}, Models: []string{"m1"}}}
	got, want := q.StorableOnly(analytics.AllParts)
	if want != analytics.AllParts || !slices.Equal(got.Filters.Topics, []string{"billing"}) || !slices.Equal(got.Filters.Models, []string{"m1"}) {
		t.Errorf("one storable value left: %+v, parts %b", got.Filters, want)
	}
	if q.Filters.Topics[0] != "bad\x00" {
		t.Errorf("StorableOnly changed the caller's filters: %q", q.Filters.Topics)
	}

	q.Filters.Topics = []string{"bad\x00", string([]byte{0xff})}
	got, want = q.StorableOnly(analytics.AllParts)
	if want != analytics.ListOf(analytics.Topic) || len(got.Filters.Topics) != 0 || !slices.Equal(got.Filters.Models, []string{"m1"}) {
		t.Errorf("no storable topic: %+v, parts %b; want the topic list alone, without its filter", got.Filters, want)
	}
	log := answerLog()
	if a, b := analytics.CountAnswer(log, got, want).Groups[analytics.Topic], analytics.CountAnswer(log, q, analytics.AllParts).Groups[analytics.Topic]; !sameGroups(a, b) {
		t.Errorf("the topic list changed: %v, reference %v", a, b)
	}
	if _, want = q.StorableOnly(analytics.PartTotal | analytics.ListOf(analytics.Model)); want != 0 {
		t.Errorf("the total and model list under an unmatchable topic filter: parts %b, want none", want)
	}

	q.Filters.Models = []string{"bad\x00"}
	if _, want = q.StorableOnly(analytics.AllParts); want != 0 {
		t.Errorf("two unmatchable filters: parts %b, want none", want)
	}
}

func sameGroups(a, b []analytics.Group) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	analytics.SortGroups(a)
	analytics.SortGroups(b)
	return slices.Equal(a, b)
}
