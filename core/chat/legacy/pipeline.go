package legacy

import (
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
)

// Stage names, as cat.legacy.models lists them; the reply's model is the
// name of the stage that answered.
const (
	StageGreeting = "greeting"
	StageIntent   = "intent"
	StageQA       = "qa"
	StageDefault  = "default"
)

// IntentThreshold is the least score an intent needs to name the topic:
// one keyword, or a third of an example's words shared (Jaccard overlap).
const IntentThreshold = 1.0 / 3

// Pipeline answers messages offline from one CAT's knowledge base.
type Pipeline struct {
	k             *Knowledge
	defaultAnswer string
	minScore      float64
	documents     func(message string) []chat.Source
}

// WithDocuments lets the qa stage answer from the CAT's documents when no
// knowledge-base entry reaches the threshold: documents returns the
// passages for a message, best first, as sources whose Snippet is the
// extract that answers it (only called then).
func (p *Pipeline) WithDocuments(documents func(message string) []chat.Source) *Pipeline {
	p.documents = documents
	return p
}

// New returns a pipeline over k (nil: an empty base) that answers with
// defaultAnswer when no stage does, and lets the qa stage answer only with
// a relevance (Knowledge.Search) of at least minScore.
func New(k *Knowledge, defaultAnswer string, minScore float64) *Pipeline {
	if k == nil {
		k = &Knowledge{df: map[string]int{}}
	}
	return &Pipeline{k: k, defaultAnswer: defaultAnswer, minScore: minScore}
}

// Result is the pipeline's answer. Topic is the intent recognized, empty
// when none was (or the intent stage did not run).
type Result struct {
	Answer  string
	Model   string
	Topic   string
	Sources []chat.Source
}

// Run tries the stages in order until one answers. Unknown names are
// skipped; when none answers, the default answer does (model "default"),
// so a message always gets a reply.
func (p *Pipeline) Run(message string, stages []string) Result {
	var topic string
	for _, s := range stages {
		switch s {
		case StageGreeting:
			if reply, ok := Greeting(message); ok {
				return Result{Answer: reply, Model: StageGreeting, Topic: topic}
			}
		case StageIntent:
			in, ok := p.Classify(message)
			if !ok {
				continue
			}
			topic = in.Name
			if in.Answer != "" {
				return Result{Answer: in.Answer, Model: StageIntent, Topic: topic}
			}
		case StageQA:
			hits := p.k.Search(message)
			if len(hits) > 0 && hits[0].Relevance >= p.minScore {
				return Result{Answer: hits[0].Entry.Answer, Model: StageQA, Topic: topic, Sources: sources(hits, p.minScore)}
			}
			if p.documents == nil {
				continue
			}
			if docs := p.documents(message); len(docs) > 0 && strings.TrimSpace(docs[0].Snippet) != "" {
				return Result{Answer: Extractive(docs), Model: StageQA, Topic: topic, Sources: docs}
			}
		case StageDefault:
			return Result{Answer: p.defaultAnswer, Model: StageDefault, Topic: topic}
		}
	}
	return Result{Answer: p.defaultAnswer, Model: StageDefault, Topic: topic}
}

// maxSources bounds the entries a reply lists.
const maxSources = 3

// sources lists the best entries at or above the threshold, the answering
// one first, each with its relevance as the score.
func sources(hits []Scored, minScore float64) []chat.Source {
	var out []chat.Source
	for _, h := range hits[:min(len(hits), maxSources)] {
		if h.Relevance >= minScore {
			out = append(out, chat.Source{Kind: chat.SourceKB, ID: h.Entry.ID, Question: h.Entry.Question, Title: h.Entry.Question,
				Snippet: chat.Snippet(h.Entry.Answer, nil), Score: h.Relevance})
		}
	}
	return out
}

// Extractive is the qa stage's answer from documents: the extract of the
// best passage, cited as source [1].
func Extractive(sources []chat.Source) string {
	return strings.TrimSpace(sources[0].Snippet) + " [1]"
}

// Classify returns the intent that best matches the message: each intent
// scores 1 per keyword among the message's words plus its best example's
// Jaccard overlap with them; the best at or above IntentThreshold wins,
// ties going to the intent listed first.
func (p *Pipeline) Classify(message string) (Intent, bool) {
	words := set(chat.Tokens(message))
	best, bestScore := -1, 0.0
	for i, in := range p.k.intents {
		score := 0.0
		for _, kw := range in.Keywords {
			if kwTokens := chat.Tokens(kw); len(kwTokens) > 0 && containsAll(words, kwTokens) {
				score++
			}
		}
		example := 0.0
		for _, ex := range in.Examples {
			example = max(example, jaccard(words, set(chat.Tokens(ex))))
		}
		score += example
		if score >= IntentThreshold && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return Intent{}, false
	}
	return p.k.intents[best], true
}

func containsAll(words map[string]bool, tokens []string) bool {
	return !slices.ContainsFunc(tokens, func(t string) bool { return !words[t] })
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
