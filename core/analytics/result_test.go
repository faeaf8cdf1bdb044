package analytics_test

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

func TestPercentage(t *testing.T) {
	tests := []struct {
		name         string
		count, total int64
		want         float64
	}{
		{"zero total", 0, 0, 0},
		{"whole", 5, 5, 100},
		{"third rounds down", 1, 3, 33.33},
		{"two thirds rounds up", 2, 3, 66.67},
		{"half", 1, 2, 50},
		{"tiny", 1, 100000, 0},
		{"just rounds up", 1, 200, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := analytics.Percentage(tt.count, tt.total); got != tt.want {
				t.Fatalf("Percentage(%d, %d) = %v, want %v", tt.count, tt.total, got, tt.want)
			}
		})
	}
}

func TestSortGroups(t *testing.T) {
	g := []analytics.Group{
		{Key: "b", Text: "b", Count: 2},
		{Key: "z", Text: "a", Count: 2},
		{Key: "y", Text: "a", Count: 2},
		{Key: "c", Text: "c", Count: 9},
		{Key: "B", Text: "B", Count: 2},
	}
	analytics.SortGroups(g)
	var keys []string
	for _, x := range g {
		keys = append(keys, x.Key)
	}
	want := []string{"c", "B", "y", "z", "b"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("order %v, want %v (count desc, text asc bytewise, key asc)", keys, want)
	}
}

func TestAssembleLimitAndEmpty(t *testing.T) {
	empty := analytics.Assemble(analytics.Counts{}, 0)
	if empty.TopicCounts == nil || empty.ModelCounts == nil || empty.PersonaCounts == nil || empty.Questions == nil || empty.Answers == nil {
		t.Fatal("empty lists must be empty slices, not nil (JSON [] not null)")
	}
	c := analytics.Counts{Total: 6, Groups: map[analytics.Dimension][]analytics.Group{
		analytics.Topic:    {{Key: "t1", Text: "t1", Count: 1}, {Key: "t2", Text: "t2", Count: 2}},
		analytics.Question: {{Key: "q1", Text: "one", Count: 1}, {Key: "q2", Text: "two", Count: 3}, {Key: "q3", Text: "three", Count: 3}},
	}}
	r := analytics.Assemble(c, 2)
	if len(r.Questions) != 2 || r.Questions[0].Question != "three" || r.Questions[1].Question != "two" {
		t.Fatalf("limit/order wrong: %+v", r.Questions)
	}
	if r.TopicCounts[0].Topic != "t2" || r.TopicCounts[0].Percentage != 66.67 || r.TopicCounts[1].Percentage != 33.33 {
		t.Fatalf("topics wrong: %+v", r.TopicCounts)
	}
}

// TestAggregateSelectiveFiltering checks the reference on a hand-counted log.
func TestAggregateSelectiveFiltering(t *testing.T) {
	mk := func(topic, model, persona, q string) analytics.Interaction {
		i := validInteraction()
		i.Topic, i.Model, i.Persona, i.Question = topic, model, persona, q
		return i.Normalize()
	}
	log := []analytics.Interaction{
		mk("billing", "m1", "p1", "q1"),
		mk("billing", "m2", "p1", "q1"),
		mk("billing", "m1", "p2", "q2"),
		mk("shipping", "m1", "p1", "q3"),
		mk("shipping", "m2", "p2", "q3"),
	}
	other := mk("billing", "m1", "p1", "q1")
	other.EventKind = "feedback"
	log = append(log, other)

	r := analytics.Aggregate(log, analytics.Query{Cat: "demo", Filters: analytics.Filters{Topics: []string{"billing"}, Models: []string{"m1"}}})
	if r.TotalInteractions != 2 {
		t.Fatalf("total = %d, want 2 (billing AND m1)", r.TotalInteractions)
	}
	wantTopics := []analytics.TopicCount{{Topic: "billing", Count: 2, Percentage: 66.67}, {Topic: "shipping", Count: 1, Percentage: 33.33}}
	if !reflect.DeepEqual(r.TopicCounts, wantTopics) {
		t.Fatalf("topics ignore the topic filter only: got %+v", r.TopicCounts)
	}
	wantModels := []analytics.ModelCount{{Membership: "m1", Count: 2}, {Membership: "m2", Count: 1}}
	if !reflect.DeepEqual(r.ModelCounts, wantModels) {
		t.Fatalf("models ignore the model filter only: got %+v", r.ModelCounts)
	}
	wantPersonas := []analytics.PersonaCount{{Persona: "p1", Count: 1}, {Persona: "p2", Count: 1}}
	if !reflect.DeepEqual(r.PersonaCounts, wantPersonas) {
		t.Fatalf("personas: got %+v", r.PersonaCounts)
	}
	if len(r.Questions) != 2 || r.Questions[0].Question != "q1" || r.Questions[0].Count != 1 {
		t.Fatalf("questions: got %+v", r.Questions)
	}
}

// TestPageSearchesAndPages: Page keeps the groups whose text contains the
// search in any case, in list order, skips offset and cuts to limit, and
// counts every match.
func TestPageSearchesAndPages(t *testing.T) {
	groups := []analytics.Group{
		{Key: "a", Text: "Where is my Parcel?", Count: 1},
		{Key: "b", Text: "parcel lost", Count: 5},
		{Key: "c", Text: "Refund", Count: 9},
		{Key: "d", Text: "PARCEL late", Count: 5},
	}
	for _, c := range []struct {
		search        string
		offset, limit int
		want          []string
		total         int64
	}{
		{"", 0, 0, []string{"c", "d", "b", "a"}, 4},
		{"parcel", 0, 0, []string{"d", "b", "a"}, 3},
		{"PaRcEl", 1, 1, []string{"b"}, 3},
		{"parcel", 3, 2, []string{}, 3},
		{"parcel", 9, 0, []string{}, 3},
		{"nothing", 0, 0, []string{}, 0},
	} {
		got, total := analytics.Page(groups, c.search, c.offset, c.limit)
		keys := []string{}
		for _, g := range got {
			keys = append(keys, g.Key)
		}
		if !slices.Equal(keys, c.want) || total != c.total {
			t.Errorf("Page(%q, %d, %d) = %v, %d; want %v, %d", c.search, c.offset, c.limit, keys, total, c.want, c.total)
		}
	}
}

// TestAssembleQueryWindow: a paged query's lists are the window with the
// totals set; without Paged the result is Assemble's with no totals.
func TestAssembleQueryWindow(t *testing.T) {
	c := analytics.Counts{Total: 3, Groups: map[analytics.Dimension][]analytics.Group{
		analytics.Question: {{Key: "q1", Text: "alpha", Count: 2}, {Key: "q2", Text: "beta", Count: 1}},
		analytics.Answer:   {{Key: "a1", Text: "gamma", Count: 3}},
	}}
	plain := analytics.AssembleQuery(c, analytics.Query{Limit: 1})
	if !reflect.DeepEqual(plain, analytics.Assemble(c, 1)) {
		t.Errorf("unpaged AssembleQuery = %+v, want Assemble's", plain)
	}
	r := analytics.AssembleQuery(c, analytics.Query{Limit: 1, Window: analytics.Window{Paged: true, Offset: 1, Search: "A"}})
	if len(r.Questions) != 1 || r.Questions[0].ID != "q2" || r.QuestionsTotal != 2 {
		t.Errorf("questions %+v total %d, want [q2] of 2", r.Questions, r.QuestionsTotal)
	}
	if len(r.Answers) != 0 || r.AnswersTotal != 1 {
		t.Errorf("answers %+v total %d, want none of 1", r.Answers, r.AnswersTotal)
	}
}

// TestTopSortsOnlyWhatIsOutOfOrder: Top gives groups in SortGroups order,
// cut to the limit; groups already in that order (as the stores give long
// lists) are returned cut, sharing their memory, and groups out of order
// are sorted in a copy, the caller's slice left as it was.
func TestTopSortsOnlyWhatIsOutOfOrder(t *testing.T) {
	unsorted := []analytics.Group{
		{Key: "b", Text: "same", Count: 2}, {Key: "z", Text: "z", Count: 9},
		{Key: "a", Text: "same", Count: 2}, {Key: "c", Text: "a", Count: 2},
	}
	want := []analytics.Group{
		{Key: "z", Text: "z", Count: 9}, {Key: "c", Text: "a", Count: 2},
		{Key: "a", Text: "same", Count: 2}, {Key: "b", Text: "same", Count: 2},
	}
	before := slices.Clone(unsorted)
	got := analytics.Top(unsorted, 3)
	if !slices.Equal(got, want[:3]) {
		t.Fatalf("Top(unsorted, 3) = %v, want %v", got, want[:3])
	}
	if !slices.Equal(unsorted, before) {
		t.Fatalf("Top changed the caller's groups: %v", unsorted)
	}
	inOrder := slices.Clone(want)
	got = analytics.Top(inOrder, 3)
	if !slices.Equal(got, want[:3]) || &got[0] != &inOrder[0] {
		t.Fatalf("Top(sorted, 3) = %v at %p, want %v sharing %p", got, &got[0], want[:3], &inOrder[0])
	}
	if q := analytics.QuestionEntries(unsorted, 0); len(q) != 4 || q[0].ID != "z" || q[1].ID != "c" || q[3].ID != "b" {
		t.Fatalf("QuestionEntries(unsorted, 0) = %v", q)
	}
}
