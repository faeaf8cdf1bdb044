// Package legacy is the offline chat pipeline of the legacy mode: stages
// (greeting, intent, qa, default) tried in the configured order until one
// answers. Each stage is plain code over the CAT's knowledge base, so a
// fresh install answers with no model service.
package legacy

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// Entry is one question/answer pair of a knowledge base.
type Entry struct {
	ID       string `json:"id" yaml:"id"`
	Question string `json:"question" yaml:"question"`
	Answer   string `json:"answer" yaml:"answer"`
}

// Intent is a topic the intent stage recognizes by its examples and
// keywords. With an Answer, the stage answers the message itself; without
// one it only names the topic and lets the next stage answer.
type Intent struct {
	Name     string   `json:"name" yaml:"name"`
	Examples []string `json:"examples" yaml:"examples"`
	Keywords []string `json:"keywords" yaml:"keywords"`
	Answer   string   `json:"answer" yaml:"answer"`
}

// Knowledge is a CAT's knowledge base, indexed for BM25 retrieval over the
// questions. Read-only once built, so safe for concurrent use.
type Knowledge struct {
	entries []Entry
	intents []Intent
	docs    [][]string     // tokens of each question
	df      map[string]int // questions containing each token
	avgLen  float64
}

// BM25 parameters: the usual Okapi values.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// NewKnowledge checks and indexes a knowledge base: entries need a unique
// id, a question and an answer; intents a unique name and an example or a
// keyword. Problems are errs.KindInvalid naming the entry.
func NewKnowledge(entries []Entry, intents []Intent) (*Knowledge, error) {
	k := &Knowledge{entries: entries, intents: intents, df: map[string]int{}}
	seen := map[string]bool{}
	total := 0
	for i, e := range entries {
		switch {
		case strings.TrimSpace(e.ID) == "":
			return nil, errs.New(errs.KindInvalid, "entry %d: missing id", i+1)
		case seen[e.ID]:
			return nil, errs.New(errs.KindInvalid, "entry %q: duplicate id", e.ID)
		case len(chat.Tokens(e.Question)) == 0 || strings.TrimSpace(e.Answer) == "":
			return nil, errs.New(errs.KindInvalid, "entry %q: needs a question with words and an answer", e.ID)
		}
		seen[e.ID] = true
		doc := chat.Tokens(e.Question)
		k.docs = append(k.docs, doc)
		total += len(doc)
		for t := range set(doc) {
			k.df[t]++
		}
	}
	if len(entries) > 0 {
		k.avgLen = float64(total) / float64(len(entries))
	}
	names := map[string]bool{}
	for i, in := range intents {
		switch {
		case strings.TrimSpace(in.Name) == "":
			return nil, errs.New(errs.KindInvalid, "intent %d: missing name", i+1)
		case names[in.Name]:
			return nil, errs.New(errs.KindInvalid, "intent %q: duplicate name", in.Name)
		case len(in.Examples) == 0 && len(in.Keywords) == 0:
			return nil, errs.New(errs.KindInvalid, "intent %q: needs examples or keywords", in.Name)
		}
		names[in.Name] = true
	}
	return k, nil
}

// Scored is an entry with its BM25 score for a query and its relevance
// (see Search).
type Scored struct {
	Entry     Entry
	Score     float64
	Relevance float64
}

// Search ranks the entries by Okapi BM25 of the query against their
// questions (k1 1.2, b 0.75, idf ln(1 + (N-n+0.5)/(n+0.5))), best first,
// ties in knowledge-base order, leaving out entries scoring 0. Relevance
// is the score relative to the entry's own question as the query: from 0
// to 1, comparable across knowledge bases of any size, which raw BM25
// scores are not.
func (k *Knowledge) Search(query string) []Scored {
	terms := set(chat.Tokens(query))
	var out []Scored
	for i := range k.docs {
		if score := k.score(terms, i); score > 0 {
			out = append(out, Scored{Entry: k.entries[i], Score: score, Relevance: score / k.score(set(k.docs[i]), i)})
		}
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

func (k *Knowledge) score(terms map[string]bool, i int) float64 {
	doc := k.docs[i]
	n := float64(len(k.docs))
	tf := map[string]int{}
	for _, t := range doc {
		tf[t]++
	}
	score := 0.0
	for t := range terms {
		f := float64(tf[t])
		if f == 0 {
			continue
		}
		df := float64(k.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(doc))/k.avgLen))
	}
	return score
}

// Intents returns the intents in configuration order.
func (k *Knowledge) Intents() []Intent { return k.intents }

// Len is the number of question/answer entries.
func (k *Knowledge) Len() int { return len(k.entries) }

func set(tokens []string) map[string]bool {
	out := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		out[t] = true
	}
	return out
}
