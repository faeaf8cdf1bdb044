package analytics

import (
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// DateLayout is the layout of startDate and endDate: a UTC calendar day.
const DateLayout = "2006-01-02"

// Dimension is one of the attributes an interaction is grouped and filtered by.
type Dimension int

// The dimensions, in the order the result lists them.
const (
	Topic Dimension = iota
	Model
	Persona
	Question
	Answer
)

// Dimensions lists every dimension, in result order.
var Dimensions = []Dimension{Topic, Model, Persona, Question, Answer}

// String names the dimension as its filter parameter does.
func (d Dimension) String() string {
	switch d {
	case Topic:
		return "topic"
	case Model:
		return "model"
	case Persona:
		return "persona"
	case Question:
		return "questionid"
	case Answer:
		return "answerid"
	}
	return "unknown"
}

// Range is a half-open interval of time [Start, End). A zero bound is open.
type Range struct {
	Start time.Time
	End   time.Time
}

// Contains reports whether t falls in the range.
func (r Range) Contains(t time.Time) bool {
	if !r.Start.IsZero() && t.Before(r.Start) {
		return false
	}
	if !r.End.IsZero() && !t.Before(r.End) {
		return false
	}
	return true
}

// ParseRange turns the optional startDate and endDate parameters into a
// Range, with the spec's error messages.
func ParseRange(startDate, endDate string) (Range, error) {
	var r Range
	var err error
	if startDate != "" {
		if r.Start, err = time.Parse(DateLayout, startDate); err != nil {
			return Range{}, errs.New(errs.KindInvalid, "Invalid startDate format. Expected YYYY-MM-DD: %v", err)
		}
	}
	if endDate != "" {
		if r.End, err = time.Parse(DateLayout, endDate); err != nil {
			return Range{}, errs.New(errs.KindInvalid, "Invalid endDate format. Expected YYYY-MM-DD: %v", err)
		}
	}
	if !r.Start.IsZero() && !r.End.IsZero() && !r.Start.Before(r.End) {
		return Range{}, errs.New(errs.KindInvalid, "startDate must be before endDate")
	}
	return r, nil
}

// Filters restricts interactions by dimension. An empty list means "not
// filtered"; values of one list are OR-ed, different lists AND-ed.
type Filters struct {
	Models      []string
	Personas    []string
	Topics      []string
	QuestionIDs []string
	AnswerIDs   []string
}

// Values returns the filter values of one dimension.
func (f Filters) Values(d Dimension) []string {
	switch d {
	case Topic:
		return f.Topics
	case Model:
		return f.Models
	case Persona:
		return f.Personas
	case Question:
		return f.QuestionIDs
	case Answer:
		return f.AnswerIDs
	}
	return nil
}

// Without returns the filters with one dimension's filter removed: the
// filters that apply to that dimension's own list (selective filtering).
func (f Filters) Without(d Dimension) Filters {
	switch d {
	case Topic:
		f.Topics = nil
	case Model:
		f.Models = nil
	case Persona:
		f.Personas = nil
	case Question:
		f.QuestionIDs = nil
	case Answer:
		f.AnswerIDs = nil
	}
	return f
}

// IsZero reports whether no filter is set.
func (f Filters) IsZero() bool {
	for _, d := range Dimensions {
		if len(f.Values(d)) > 0 {
			return false
		}
	}
	return true
}

// Selection is what a storage adapter counts over: one CAT's api
// interactions within a range that pass the filters.
type Selection struct {
	Cat     string
	Range   Range
	Filters Filters
}

// Matches reports whether the interaction belongs to the selection. It is
// the reference definition every adapter's query must agree with.
func (s Selection) Matches(i Interaction) bool {
	if !i.Counted() || i.Cat != s.Cat || !s.Range.Contains(i.Time) {
		return false
	}
	for _, d := range Dimensions {
		if vals := s.Filters.Values(d); len(vals) > 0 && !contains(vals, i.Key(d)) {
			return false
		}
	}
	return true
}

// Key returns the interaction's value for a dimension: the name for topic,
// model and persona, the id for questions and answers.
func (i Interaction) Key(d Dimension) string {
	switch d {
	case Topic:
		return i.Topic
	case Model:
		return i.Model
	case Persona:
		return i.Persona
	case Question:
		return i.QuestionID
	case Answer:
		return i.AnswerID
	}
	return ""
}

// Text returns the text shown for a dimension's entry: the question or
// answer text, or the key itself for the other dimensions.
func (i Interaction) Text(d Dimension) string {
	switch d {
	case Question:
		return i.Question
	case Answer:
		return i.Answer
	}
	return i.Key(d)
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// Query is a request for analytics over one CAT. Limit, when positive, keeps
// only the first Limit entries of the question and answer lists; Window,
// when paged, searches and pages those two lists (see Window).
type Query struct {
	Cat     string
	Range   Range
	Filters Filters
	Limit   int
	Window  Window
}

// Window pages and searches the question and answer lists of a query, as
// data: when Paged, each list keeps only the groups whose text contains
// Search (case-insensitively; empty keeps all), in list order, skips the
// first Offset of them and keeps Limit (the query's) of the rest, and the
// result reports how many groups matched (Result.QuestionsTotal,
// AnswersTotal). Stores are then asked for whole lists (LimitOf is 0):
// the window is cut in core, over the counted groups, the same for every
// back end.
type Window struct {
	Paged  bool
	Offset int
	Search string
}

// Selection returns the selection of the query with every filter applied.
func (q Query) Selection() Selection {
	return Selection{Cat: q.Cat, Range: q.Range, Filters: q.Filters}
}

// SelectionFor returns the selection of one dimension's list: every filter
// but that dimension's own.
func (q Query) SelectionFor(d Dimension) Selection {
	return Selection{Cat: q.Cat, Range: q.Range, Filters: q.Filters.Without(d)}
}

// LimitOf returns how many groups the dimension's list keeps: the query's
// limit for the question and answer lists, 0 (all of them) otherwise.
func (q Query) LimitOf(d Dimension) int {
	if q.Limit > 0 && !q.Window.Paged && (d == Question || d == Answer) {
		return q.Limit
	}
	return 0
}

// Parts is a set of the parts of a query's answer: its total and the lists
// of its dimensions. A caller that needs one part (a metric route) asks
// only for it, so that a store need not count the others.
type Parts uint8

// PartTotal is the total of an answer; ListOf(d) is the list of dimension d.
const PartTotal Parts = 1 << 5

// AllParts is the whole answer: the total and every list.
const AllParts = PartTotal | 1<<Topic | 1<<Model | 1<<Persona | 1<<Question | 1<<Answer

// ListOf returns the part that is the list of dimension d.
func ListOf(d Dimension) Parts { return 1 << d }

// Has reports whether every part of o is in p.
func (p Parts) Has(o Parts) bool { return p&o == o }

// Lists reports which dimensions' lists are in p, by dimension.
func (p Parts) Lists() [len(allDimensions)]bool {
	var out [len(allDimensions)]bool
	for _, d := range allDimensions {
		out[d] = p.Has(ListOf(d))
	}
	return out
}

// allDimensions is Dimensions as an array, for sizes known at compile time.
var allDimensions = [...]Dimension{Topic, Model, Persona, Question, Answer}

// StorableOnly returns the query without the filter values that could
// never have been stored (NUL bytes, invalid UTF-8, oversized, see
// CheckText): they match nothing, and no store needs to see them
// (PostgreSQL rejects NUL bytes outright). It also returns which of the
// wanted parts can still count anything: a filter that loses every value
// matches nothing, which empties every part but its own dimension's list
// (selective filtering), and that list does not depend on the filter, so
// the returned query leaves it out. When two filters lose every value, no
// part can count anything and the returned parts are empty.
func (q Query) StorableOnly(want Parts) (Query, Parts) {
	f := q.Filters
	lists := [...]*[]string{Topic: &f.Topics, Model: &f.Models, Persona: &f.Personas, Question: &f.QuestionIDs, Answer: &f.AnswerIDs}
	for _, d := range Dimensions {
		values := lists[d]
		if len(*values) == 0 {
			continue
		}
		kept := make([]string, 0, len(*values))
		for _, v := range *values {
			if CheckText(d.String(), v) == nil {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			// Only d's own list can count anything, and it ignores d's filter.
			want &= ListOf(d)
			kept = nil
		}
		*values = kept
	}
	q.Filters = f
	return q, want
}
