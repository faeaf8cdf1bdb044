// Package retrieval is the use case of a CAT's documents: ingesting them
// (parse, chunk, store, embed), deleting them, and answering a question
// with the passages that fit it best: keyword search on the store's own
// index, vector search over an in-memory exact index of the chunks'
// embeddings when cat.knowledge.embeddings is configured, fused by
// reciprocal rank, cut at cat.knowledge.min_score. An embeddings service
// that is missing or down leaves keyword search alone serving (logged and
// counted through Deps.OnFallback, never an error to the user).
package retrieval

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

// Deps are the ports the service works through. Embedder may be nil:
// keyword search only.
type Deps struct {
	Store    ports.DocumentStore
	Embedder ports.Embedder
	Clock    ports.Clock
	Log      *slog.Logger
	// OnFallback is told each time a search that should have used
	// vectors served by keywords alone, with why ("embed_failed",
	// "indexing"), for the metrics.
	OnFallback func(cat, reason string)
	// BatchSize is the texts of one embeddings call (64 when 0).
	BatchSize int
	// RetryAfter is how long a failed index build waits before the next
	// search tries again (30 s when 0).
	RetryAfter time.Duration
}

// Service ingests, lists, deletes and retrieves documents. Safe for
// concurrent use.
type Service struct {
	d       Deps
	mu      sync.Mutex
	indexes map[string]*catIndex
	wg      sync.WaitGroup
}

// MaxDocumentBytes bounds an uploaded document.
const MaxDocumentBytes = 10 << 20

// New returns the service, or errs.KindInternal when Store or Clock is
// missing.
func New(d Deps) (*Service, error) {
	if d.Store == nil || d.Clock == nil {
		return nil, errs.New(errs.KindInternal, "retrieval: Store and Clock are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.OnFallback == nil {
		d.OnFallback = func(string, string) {}
	}
	if d.BatchSize <= 0 {
		d.BatchSize = 64
	}
	if d.RetryAfter <= 0 {
		d.RetryAfter = 30 * time.Second
	}
	return &Service{d: d, indexes: map[string]*catIndex{}}, nil
}

// Upload is a document as given: a file's content and name, or a title
// and text.
type Upload struct {
	Title    string
	URL      string
	Filename string
	// Format is knowledge.FormatMarkdown, FormatText or FormatHTML.
	Format  string
	Content []byte
	// Origin is "upload" (the default) or "dir:<file name>".
	Origin string
}

// Ingest stores a document: the same content already stored for the CAT
// is returned as it is (created false) and nothing is chunked or
// embedded again. Errors: errs.KindInvalid for content that is empty, too
// large, not text of the format, or without words.
func (s *Service) Ingest(ctx context.Context, cfg catconfig.Cat, up Upload) (knowledge.Document, bool, error) {
	switch {
	case len(strings.TrimSpace(string(up.Content))) == 0:
		return knowledge.Document{}, false, errs.New(errs.KindInvalid, "document: empty")
	case len(up.Content) > MaxDocumentBytes:
		return knowledge.Document{}, false, errs.New(errs.KindTooLarge, "document: larger than %d bytes", MaxDocumentBytes)
	case utf8.RuneCountInString(up.Title) > 300:
		return knowledge.Document{}, false, errs.New(errs.KindInvalid, "title: longer than 300 characters")
	case len(up.URL) > 2000:
		return knowledge.Document{}, false, errs.New(errs.KindInvalid, "url: longer than 2000 bytes")
	}
	id := knowledge.ContentID(up.Content)
	if doc, err := s.d.Store.Document(ctx, cfg.Name, id); err == nil {
		doc.Chunks = nil
		return doc, false, nil
	} else if errs.KindOf(err) != errs.KindNotFound {
		return knowledge.Document{}, false, err
	}
	parsed, err := knowledge.Parse(up.Format, up.Content)
	if err != nil {
		return knowledge.Document{}, false, err
	}
	chunks := knowledge.Chunker{Size: cfg.Chat.Knowledge.ChunkTokens}.Chunk(id, parsed)
	if len(chunks) == 0 {
		return knowledge.Document{}, false, errs.New(errs.KindInvalid, "document: no text")
	}
	title := cmp.Or(strings.TrimSpace(up.Title), parsed.Title, strings.TrimSpace(up.Filename), firstWords(chunks[0].Text))
	doc := knowledge.Document{
		Cat: cfg.Name, ID: id, Title: title, URL: up.URL, Origin: cmp.Or(up.Origin, "upload"), Format: up.Format,
		Bytes: len(up.Content), CreatedAt: s.d.Clock.Now().UTC(), Chunks: chunks, ChunkCount: len(chunks),
	}
	created, err := s.d.Store.PutDocument(ctx, doc)
	if err != nil {
		return knowledge.Document{}, false, err
	}
	if !created { // a concurrent upload of the same content won
		stored, err := s.d.Store.Document(ctx, cfg.Name, id)
		stored.Chunks = nil
		return stored, false, err
	}
	s.added(ctx, cfg, doc)
	doc.Chunks = nil
	return doc, true, nil
}

func firstWords(text string) string {
	w := strings.Fields(text)
	t := strings.Join(w[:min(len(w), 8)], " ")
	if utf8.RuneCountInString(t) > 80 {
		t = string([]rune(t)[:80])
	}
	return t
}

// Documents lists the CAT's documents, oldest first.
func (s *Service) Documents(ctx context.Context, cat string) ([]knowledge.Document, error) {
	return s.d.Store.Documents(ctx, cat)
}

// Document returns a document with its chunks.
func (s *Service) Document(ctx context.Context, cat, id string) (knowledge.Document, error) {
	return s.d.Store.Document(ctx, cat, id)
}

// Delete removes a document everywhere at once: its chunks, their
// keyword index entries, cached embeddings no other chunk needs, and its
// vectors in the in-memory index.
func (s *Service) Delete(ctx context.Context, cat, id string) error {
	doc, err := s.d.Store.Document(ctx, cat, id)
	if err != nil {
		return err
	}
	if err := s.d.Store.DeleteDocument(ctx, cat, id); err != nil {
		return err
	}
	s.removed(cat, doc)
	return nil
}

// Mode is how passages are ranked.
type Mode string

// Retrieval modes: keyword search, vector search, or both fused.
const (
	Keyword Mode = "keyword"
	Vector  Mode = "vector"
	Hybrid  Mode = "hybrid"
)

// Hit is a passage retrieved for a question, with its relevance (0 to
// 1: the larger of its keyword coverage and its cosine similarity).
type Hit struct {
	Passage   knowledge.Passage
	Relevance float64
}

// candidates is how many each ranking contributes to the fusion.
func candidates(topK int) int { return max(4*topK, 20) }

// Rank returns at most k passages for the question by the mode, best
// first, without the min_score cut: what Search and the evaluation use.
// Vector and hybrid ranking wait for nothing: without vectors of the
// configured model yet (or with the service down), they rank by keywords.
func (s *Service) Rank(ctx context.Context, cfg catconfig.Cat, question string, mode Mode, k int) ([]Hit, error) {
	terms := knowledge.QueryTerms(question)
	var kw []knowledge.Passage
	if mode != Vector {
		var err error
		if kw, err = s.d.Store.SearchChunks(ctx, cfg.Name, terms, candidates(k)); err != nil {
			return nil, err
		}
	}
	var vec []knowledge.Scored
	var gen *generation
	if mode != Keyword {
		gen, vec = s.vectorSearch(ctx, cfg, question, candidates(k))
		if gen == nil && mode == Vector {
			return s.Rank(ctx, cfg, question, Keyword, k)
		}
	}
	cosine := map[string]float64{}
	lists := [][]string{}
	if mode != Vector {
		ids := make([]string, len(kw))
		for i, p := range kw {
			ids[i] = p.Chunk.ID
		}
		lists = append(lists, ids)
	}
	if gen != nil {
		ids := make([]string, len(vec))
		for i, v := range vec {
			ids[i] = gen.ids[v.Index]
			cosine[ids[i]] = v.Score
		}
		lists = append(lists, ids)
	}
	fused := knowledge.Fuse(lists...)
	fused = fused[:min(len(fused), k)]
	byID := map[string]knowledge.Passage{}
	for _, p := range kw {
		byID[p.Chunk.ID] = p
	}
	var missing []string
	for _, f := range fused {
		if _, ok := byID[f.ID]; !ok {
			missing = append(missing, f.ID)
		}
	}
	if len(missing) > 0 {
		ps, err := s.d.Store.Passages(ctx, cfg.Name, missing)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			byID[p.Chunk.ID] = p
		}
	}
	var out []Hit
	for _, f := range fused {
		p, ok := byID[f.ID]
		if !ok {
			continue // deleted since the index was read
		}
		out = append(out, Hit{Passage: p, Relevance: max(knowledge.Coverage(terms, knowledge.IndexText(p.Chunk)), cosine[f.ID])})
	}
	return out, nil
}

// SnippetRunes bounds a source's snippet.
const SnippetRunes = 400

// Search returns the CAT's passages for the question as a reply's
// sources: hybrid ranking, the best cat.knowledge.top_k at or above
// cat.knowledge.min_score, each with an extract answering the question
// as its snippet. No passage is no error.
func (s *Service) Search(ctx context.Context, cat catconfig.Cat, query string) ([]chat.Source, error) {
	k := cat.Chat.Knowledge
	hits, err := s.Rank(ctx, cat, query, Hybrid, k.TopK)
	if err != nil {
		return nil, err
	}
	terms := knowledge.QueryTerms(query)
	var out []chat.Source
	for _, h := range hits {
		if h.Relevance < k.MinScore {
			continue
		}
		p := h.Passage
		out = append(out, chat.Source{
			Kind: chat.SourceDocument, ID: p.DocID, Title: p.DocTitle, ChunkID: p.Chunk.ID,
			Snippet: knowledge.Excerpt(p.Chunk.Text, terms, SnippetRunes), Score: h.Relevance, URL: p.DocURL,
		})
	}
	return out, nil
}

// Close waits for background index builds to end (they end with ctx of
// the call that started them, or when done).
func (s *Service) Close() { s.wg.Wait() }
