package memstore

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.DocumentStore = (*Documents)(nil)

// Documents keeps CATs' documents in memory, with an inverted index of
// their chunks' words kept in step with every write (ranked by Okapi
// BM25) and the embeddings cache. The reference of the document contract
// suite. Safe for concurrent use.
type Documents struct {
	mu      sync.RWMutex
	cats    map[string]*catDocs
	vectors map[vecKey][]float32
}

type vecKey struct{ hash, model string }

type catDocs struct {
	docs   map[string]knowledge.Document // with chunks
	chunks map[string]*memChunk          // by chunk id
	// postings: word -> chunk id -> term frequency.
	postings map[string]map[string]int
	words    int // total words of all chunks, for BM25's average length
}

type memChunk struct {
	p     knowledge.Passage
	terms []string
}

// NewDocuments returns an empty document store.
func NewDocuments() *Documents {
	return &Documents{cats: map[string]*catDocs{}, vectors: map[vecKey][]float32{}}
}

func (d *Documents) cat(name string) *catDocs {
	c := d.cats[name]
	if c == nil {
		c = &catDocs{docs: map[string]knowledge.Document{}, chunks: map[string]*memChunk{}, postings: map[string]map[string]int{}}
		d.cats[name] = c
	}
	return c
}

// PutDocument implements ports.DocumentStore.
func (d *Documents) PutDocument(_ context.Context, doc knowledge.Document) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cat(doc.Cat)
	if _, ok := c.docs[doc.ID]; ok {
		return false, nil
	}
	doc.Chunks = slices.Clone(doc.Chunks)
	doc.ChunkCount = len(doc.Chunks)
	c.docs[doc.ID] = doc
	for _, ch := range doc.Chunks {
		terms := chat.Tokens(knowledge.IndexText(ch))
		c.chunks[ch.ID] = &memChunk{p: knowledge.Passage{DocID: doc.ID, DocTitle: doc.Title, DocURL: doc.URL, Chunk: ch}, terms: terms}
		for _, t := range terms {
			if c.postings[t] == nil {
				c.postings[t] = map[string]int{}
			}
			c.postings[t][ch.ID]++
		}
		c.words += len(terms)
	}
	return true, nil
}

// Documents implements ports.DocumentStore.
func (d *Documents) Documents(_ context.Context, cat string) ([]knowledge.Document, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []knowledge.Document
	if c := d.cats[cat]; c != nil {
		for _, doc := range c.docs {
			doc.Chunks = nil
			out = append(out, doc)
		}
	}
	slices.SortFunc(out, func(a, b knowledge.Document) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Document implements ports.DocumentStore.
func (d *Documents) Document(_ context.Context, cat, id string) (knowledge.Document, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if c := d.cats[cat]; c != nil {
		if doc, ok := c.docs[id]; ok {
			doc.Chunks = slices.Clone(doc.Chunks)
			return doc, nil
		}
	}
	return knowledge.Document{}, notFoundDoc(id)
}

func notFoundDoc(id string) error {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return errs.New(errs.KindNotFound, "document %q not found", id)
}

// DeleteDocument implements ports.DocumentStore.
func (d *Documents) DeleteDocument(_ context.Context, cat, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cats[cat]
	if c == nil {
		return notFoundDoc(id)
	}
	doc, ok := c.docs[id]
	if !ok {
		return notFoundDoc(id)
	}
	delete(c.docs, id)
	for _, ch := range doc.Chunks {
		mc := c.chunks[ch.ID]
		delete(c.chunks, ch.ID)
		for _, t := range mc.terms {
			if p := c.postings[t]; p != nil {
				delete(p, ch.ID)
				if len(p) == 0 {
					delete(c.postings, t)
				}
			}
		}
		c.words -= len(mc.terms)
	}
	// Embeddings of texts no chunk of any CAT holds any more.
	held := map[string]bool{}
	for _, c := range d.cats {
		for _, mc := range c.chunks {
			held[mc.p.Chunk.Hash] = true
		}
	}
	for k := range d.vectors {
		if !held[k.hash] && slices.ContainsFunc(doc.Chunks, func(ch knowledge.Chunk) bool { return ch.Hash == k.hash }) {
			delete(d.vectors, k)
		}
	}
	return nil
}

// BM25 parameters of the in-memory ranking (Okapi's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// SearchChunks implements ports.DocumentStore.
func (d *Documents) SearchChunks(_ context.Context, cat string, terms []string, limit int) ([]knowledge.Passage, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	c := d.cats[cat]
	if c == nil || len(c.chunks) == 0 || limit <= 0 {
		return nil, nil
	}
	n := float64(len(c.chunks))
	avg := float64(c.words) / n
	score := map[string]float64{}
	for _, t := range slices.Compact(slices.Sorted(slices.Values(terms))) {
		p := c.postings[t]
		idf := math.Log(1 + (n-float64(len(p))+0.5)/(float64(len(p))+0.5))
		for id, tf := range p {
			f := float64(tf)
			l := float64(len(c.chunks[id].terms))
			score[id] += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*l/avg))
		}
	}
	ids := make([]string, 0, len(score))
	for id := range score {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b)) })
	var out []knowledge.Passage
	for _, id := range ids[:min(len(ids), limit)] {
		out = append(out, c.chunks[id].p)
	}
	return out, nil
}

// Passages implements ports.DocumentStore.
func (d *Documents) Passages(_ context.Context, cat string, chunkIDs []string) ([]knowledge.Passage, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []knowledge.Passage
	if c := d.cats[cat]; c != nil {
		for _, id := range chunkIDs {
			if mc, ok := c.chunks[id]; ok {
				out = append(out, mc.p)
			}
		}
	}
	return out, nil
}

// AllPassages implements ports.DocumentStore.
func (d *Documents) AllPassages(ctx context.Context, cat string) ([]knowledge.Passage, error) {
	docs, _ := d.Documents(ctx, cat)
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []knowledge.Passage
	c := d.cats[cat]
	for _, doc := range docs {
		for _, ch := range c.docs[doc.ID].Chunks {
			out = append(out, c.chunks[ch.ID].p)
		}
	}
	return out, nil
}

// PutEmbeddings implements ports.DocumentStore.
func (d *Documents) PutEmbeddings(_ context.Context, model string, vectors map[string][]float32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for h, v := range vectors {
		if _, ok := d.vectors[vecKey{h, model}]; !ok {
			d.vectors[vecKey{h, model}] = slices.Clone(v)
		}
	}
	return nil
}

// Embeddings implements ports.DocumentStore.
func (d *Documents) Embeddings(_ context.Context, model string, hashes []string) (map[string][]float32, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := map[string][]float32{}
	for _, h := range hashes {
		if v, ok := d.vectors[vecKey{h, model}]; ok {
			out[h] = slices.Clone(v)
		}
	}
	return out, nil
}
