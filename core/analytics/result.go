package analytics

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Group is one entry of a grouped count: the dimension's key (a name, or a
// question or answer id), the text shown for it, and how many interactions
// it has. For topic, model and persona the text is the key.
type Group struct {
	Key   string
	Text  string
	Count int64
}

// TopicCount is one entry of topic_counts.
type TopicCount struct {
	Topic      string
	Count      int64
	Percentage float64
}

// ModelCount is one entry of model_counts; the model name is in Membership,
// as the spec names it.
type ModelCount struct {
	Membership string
	Count      int64
}

// PersonaCount is one entry of persona_counts.
type PersonaCount struct {
	Persona string
	Count   int64
}

// QuestionEntry is one unique question with its count.
type QuestionEntry struct {
	ID       string
	Question string
	Count    int64
}

// AnswerEntry is one unique answer with its count; the text is in Answers,
// as the spec names it.
type AnswerEntry struct {
	ID      string
	Answers string
	Count   int64
}

// Result is the full analytics result of a query. Every list ignores its own
// filter (selective filtering); TotalInteractions applies all of them.
type Result struct {
	TotalInteractions int64
	TopicCounts       []TopicCount
	ModelCounts       []ModelCount
	PersonaCounts     []PersonaCount
	Questions         []QuestionEntry
	Answers           []AnswerEntry
	// QuestionsTotal and AnswersTotal count the groups of each list that
	// match a paged query's search, before its offset and limit; they are
	// 0 for a query that is not paged.
	QuestionsTotal int64
	AnswersTotal   int64
}

// SortGroups orders groups as every list is ordered: count descending, then
// text ascending (byte order), then key ascending.
func SortGroups(groups []Group) {
	slices.SortFunc(groups, compareGroups)
}

// compareGroups is SortGroups' order.
func compareGroups(a, b Group) int {
	if c := cmp.Compare(b.Count, a.Count); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Text, b.Text); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// sorted returns groups in SortGroups order, cut to limit when limit > 0:
// groups themselves when they are in order already (as the stores give
// long lists: no copy of hundreds of thousands of groups), else a sorted
// copy. The caller must not change what it returns.
func sorted(groups []Group, limit int) []Group {
	out := groups
	if !slices.IsSortedFunc(groups, compareGroups) {
		out = slices.Clone(groups)
		SortGroups(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Top returns the first n groups in SortGroups order (the question and
// answer lists of a query with a limit), or, when n is 0, the groups as
// they are. When groups are in that order already it returns them cut,
// not a copy; the caller must not change what it returns.
func Top(groups []Group, n int) []Group {
	if n <= 0 {
		return groups
	}
	return sorted(groups, n)
}

// Percentage returns count as a share of total, x100, rounded to 2 decimals.
func Percentage(count, total int64) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(count)*10000/float64(total)) / 100
}

// TopicCounts turns topic groups into topic_counts, with each percentage the
// share of the list's own total.
func TopicCounts(groups []Group) []TopicCount {
	var total int64
	for _, g := range groups {
		total += g.Count
	}
	out := make([]TopicCount, 0, len(groups))
	for _, g := range sorted(groups, 0) {
		out = append(out, TopicCount{Topic: g.Key, Count: g.Count, Percentage: Percentage(g.Count, total)})
	}
	return out
}

// ModelCounts turns model groups into model_counts.
func ModelCounts(groups []Group) []ModelCount {
	out := make([]ModelCount, 0, len(groups))
	for _, g := range sorted(groups, 0) {
		out = append(out, ModelCount{Membership: g.Key, Count: g.Count})
	}
	return out
}

// PersonaCounts turns persona groups into persona_counts.
func PersonaCounts(groups []Group) []PersonaCount {
	out := make([]PersonaCount, 0, len(groups))
	for _, g := range sorted(groups, 0) {
		out = append(out, PersonaCount{Persona: g.Key, Count: g.Count})
	}
	return out
}

// QuestionEntries turns question groups into the questions list, keeping the
// first limit entries when limit > 0.
func QuestionEntries(groups []Group, limit int) []QuestionEntry {
	groups = sorted(groups, limit)
	out := make([]QuestionEntry, 0, len(groups))
	for _, g := range groups {
		out = append(out, QuestionEntry{ID: g.Key, Question: g.Text, Count: g.Count})
	}
	return out
}

// AnswerEntries turns answer groups into the answers list, keeping the first
// limit entries when limit > 0.
func AnswerEntries(groups []Group, limit int) []AnswerEntry {
	groups = sorted(groups, limit)
	out := make([]AnswerEntry, 0, len(groups))
	for _, g := range groups {
		out = append(out, AnswerEntry{ID: g.Key, Answers: g.Text, Count: g.Count})
	}
	return out
}

// Page returns the window of groups: those whose text contains search,
// ignoring case (all of them when search is empty), in SortGroups order,
// without the first offset and cut to limit when limit > 0; and how many
// matched the search.
func Page(groups []Group, search string, offset, limit int) ([]Group, int64) {
	needle := strings.ToLower(search)
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		if needle == "" || strings.Contains(strings.ToLower(g.Text), needle) {
			out = append(out, g)
		}
	}
	SortGroups(out)
	total := int64(len(out))
	out = out[min(max(offset, 0), len(out)):]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total
}

// Counts is the answer to a query, as a store counts it and a result is
// assembled from: the total under every filter and, per dimension, the
// groups under every filter but its own (see CountAnswer).
type Counts struct {
	Total  int64
	Groups map[Dimension][]Group
}

// Assemble builds the result of a query from its counts.
func Assemble(c Counts, limit int) Result {
	return Result{
		TotalInteractions: c.Total,
		TopicCounts:       TopicCounts(c.Groups[Topic]),
		ModelCounts:       ModelCounts(c.Groups[Model]),
		PersonaCounts:     PersonaCounts(c.Groups[Persona]),
		Questions:         QuestionEntries(c.Groups[Question], limit),
		Answers:           AnswerEntries(c.Groups[Answer], limit),
	}
}

// AssembleQuery builds the result of a query from its counts: Assemble
// with the query's limit, or, for a paged query (Window.Paged), with its
// question and answer lists cut to the window and their totals set.
func AssembleQuery(c Counts, q Query) Result {
	if !q.Window.Paged {
		return Assemble(c, q.Limit)
	}
	groups := make(map[Dimension][]Group, len(c.Groups))
	for d, g := range c.Groups {
		groups[d] = g
	}
	var qt, at int64
	groups[Question], qt = Page(c.Groups[Question], q.Window.Search, q.Window.Offset, q.Limit)
	groups[Answer], at = Page(c.Groups[Answer], q.Window.Search, q.Window.Offset, q.Limit)
	r := Assemble(Counts{Total: c.Total, Groups: groups}, 0)
	r.QuestionsTotal, r.AnswersTotal = qt, at
	return r
}
