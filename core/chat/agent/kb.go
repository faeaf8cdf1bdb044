package agent

import (
	"context"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
)

// maxKBHits bounds the entries one knowledge_search returns.
const maxKBHits = 5

// KnowledgeBase is the Searcher over a CAT's legacy knowledge base
// (cat.legacy.knowledge_base): BM25 over its questions, each hit an entry
// with its relevance (0 to 1) as the score.
type KnowledgeBase struct {
	Source ports.KnowledgeSource
}

var _ Searcher = KnowledgeBase{}

// Search returns the best entries for the query, at most five.
func (k KnowledgeBase) Search(ctx context.Context, cat catconfig.Cat, query string) ([]chat.Source, error) {
	kb, err := k.Source.Knowledge(ctx, cat.Chat.Legacy.KnowledgeBase)
	if err != nil || kb == nil {
		return nil, err
	}
	hits := kb.Search(query)
	out := make([]chat.Source, 0, min(len(hits), maxKBHits))
	for _, h := range hits[:min(len(hits), maxKBHits)] {
		out = append(out, chat.Source{
			Kind: chat.SourceKB, ID: h.Entry.ID, Question: h.Entry.Question, Title: h.Entry.Question,
			Snippet: h.Entry.Answer, Score: h.Relevance,
		})
	}
	return out, nil
}

// Searchers searches with each in turn and gives every hit, each
// searcher's in its own order: the knowledge base's entries and the
// documents' passages together.
type Searchers []Searcher

// Search implements Searcher. A searcher that fails fails the search.
func (ss Searchers) Search(ctx context.Context, cat catconfig.Cat, query string) ([]chat.Source, error) {
	var all []chat.Source
	for _, s := range ss {
		hits, err := s.Search(ctx, cat, query)
		if err != nil {
			return nil, err
		}
		all = append(all, hits...)
	}
	return all, nil
}
