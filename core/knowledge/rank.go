package knowledge

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
)

// RRFK is the k of reciprocal-rank fusion: 60, as Cormack et al. chose,
// so a list's top ranks weigh more without one list dominating.
const RRFK = 60

// Fused is an id with its fused score.
type Fused struct {
	ID    string
	Score float64
}

// Fuse merges ranked lists of ids (best first) by reciprocal rank: each
// id scores the sum over the lists holding it of 1/(RRFK + rank), rank
// from 1. Best first; ties go to the id first seen in the earlier list.
// An id repeated in one list counts at its best rank there.
func Fuse(lists ...[]string) []Fused {
	score := map[string]float64{}
	var order []string
	for _, l := range lists {
		seen := map[string]bool{}
		for i, id := range l {
			if seen[id] {
				continue
			}
			seen[id] = true
			if _, ok := score[id]; !ok {
				order = append(order, id)
			}
			score[id] += 1 / float64(RRFK+i+1)
		}
	}
	out := make([]Fused, len(order))
	for i, id := range order {
		out[i] = Fused{ID: id, Score: score[id]}
	}
	slices.SortStableFunc(out, func(a, b Fused) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// stopWords are English words too common to tell passages apart: left
// out of keyword queries and of a hit's relevance.
var stopWords = map[string]bool{}

func init() {
	for w := range strings.FieldsSeq(`a an and are as at be but by can do does for from how i if in into is it its
		me my no not of on or our so that the their then there these they this to was we what when where which who
		why will with you your yours should could would have has had am been being any some also just very
		i'm it's don't isn't`) {
		stopWords[w] = true
	}
}

// QueryTerms are the words of a question that keyword search looks for:
// its distinct words (chat.Tokens) without stop words, or all of them
// when it has nothing else.
func QueryTerms(question string) []string {
	all := chat.Tokens(question)
	var out []string
	seen := map[string]bool{}
	for _, t := range all {
		if !stopWords[t] && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		for _, t := range all {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// Coverage is how much of a question a text answers by its words: the
// share of the question's terms (QueryTerms) among the text's words, from
// 0 to 1. It is the relevance of a keyword hit, comparable across
// databases whose own ranking scores are not.
func Coverage(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	words := map[string]bool{}
	for _, w := range chat.Tokens(text) {
		words[w] = true
	}
	n := 0
	for _, t := range terms {
		if words[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

var citation = regexp.MustCompile(`\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]`)

// CheckCitations keeps the [n] markers of a reply that name one of the
// sources supplied (1 to n) and removes the others; "[1, 7]" with two
// sources becomes "[1]". A bracket followed by "(" is a Markdown link,
// not a citation, and stays. It returns the text and the source numbers
// cited, in first-cited order.
func CheckCitations(text string, sources int) (string, []int) {
	var cited []int
	var b strings.Builder
	last := 0
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		if m[1] < len(text) && text[m[1]] == '(' {
			continue
		}
		var keep []string
		for f := range strings.SplitSeq(text[m[2]:m[3]], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(f))
			if n >= 1 && n <= sources {
				keep = append(keep, strconv.Itoa(n))
				if !slices.Contains(cited, n) {
					cited = append(cited, n)
				}
			}
		}
		start := m[0]
		if len(keep) == 0 {
			// Drop the space before a removed marker too ("text [9]." → "text.").
			for start > last && text[start-1] == ' ' {
				start--
			}
		}
		b.WriteString(text[last:start])
		if len(keep) > 0 {
			b.WriteString("[" + strings.Join(keep, ", ") + "]")
		}
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String(), cited
}
