package retrieval

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/knowledge"
)

// generation is a CAT's vector index for one embeddings model: the
// chunks' ids and unit vectors, scanned exactly. Immutable once
// published: a write publishes a copy (the vectors themselves are
// shared), so a search reads it without a lock.
type generation struct {
	model string
	ids   []string
	vecs  [][]float32
}

// catIndex is a CAT's current generation and the state of its rebuild.
type catIndex struct {
	current *generation
	// stale marks a current generation missing vectors (an ingest whose
	// embedding failed): it serves, and a rebuild is due.
	stale    bool
	building bool
	failedAt time.Time
	// changes counts writes, so a build that raced one builds again.
	changes int
	// buildMu serializes the builds of the CAT, so no text is embedded
	// twice by two of them.
	buildMu sync.Mutex
}

// BuildTimeout bounds a background index build.
const BuildTimeout = 30 * time.Minute

func (s *Service) index(cat string) *catIndex {
	idx := s.indexes[cat]
	if idx == nil {
		idx = &catIndex{}
		s.indexes[cat] = idx
	}
	return idx
}

// vectorSearch ranks the CAT's chunks by cosine similarity to the
// question with the current generation, and starts building one for the
// configured model when there is none or it is of another model (the
// old one serves meanwhile, its questions embedded with its own model).
// A nil generation means keyword search alone: no endpoint, no
// generation yet, or the service failed.
func (s *Service) vectorSearch(ctx context.Context, cfg catconfig.Cat, question string, n int) (*generation, []knowledge.Scored) {
	e := cfg.Chat.Knowledge.Embeddings
	if e.BaseURL == "" || s.d.Embedder == nil {
		return nil, nil
	}
	s.mu.Lock()
	idx := s.index(cfg.Name)
	gen := idx.current
	due := gen == nil || gen.model != e.Model || idx.stale
	s.mu.Unlock()
	if due {
		s.startBuild(ctx, cfg)
	}
	if gen == nil {
		s.d.OnFallback(cfg.Name, "indexing")
		return nil, nil
	}
	if len(gen.ids) == 0 {
		return gen, nil
	}
	q, err := s.d.Embedder.Embed(ctx, knowledge.EmbedRequest{Cat: cfg.Name, BaseURL: e.BaseURL, Model: gen.model, Inputs: []string{question}})
	if err != nil || len(q) != 1 || len(q[0]) != len(gen.vecs[0]) {
		s.d.Log.WarnContext(ctx, "knowledge: embedding a question failed; keyword search only", "cat", cfg.Name, "model", gen.model, "err", err)
		s.d.OnFallback(cfg.Name, "embed_failed")
		return nil, nil
	}
	return gen, knowledge.TopK(knowledge.Normalize(q[0]), gen.vecs, n)
}

// startBuild builds the configured model's generation in the background
// unless one is building or the last attempt failed less than
// RetryAfter ago.
func (s *Service) startBuild(ctx context.Context, cfg catconfig.Cat) {
	s.mu.Lock()
	idx := s.index(cfg.Name)
	if idx.building || s.d.Clock.Now().Sub(idx.failedAt) < s.d.RetryAfter {
		s.mu.Unlock()
		return
	}
	idx.building = true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BuildTimeout)
		defer cancel()
		idx.buildMu.Lock()
		defer idx.buildMu.Unlock()
		_ = s.build(ctx, cfg)
	}()
}

// Index builds the CAT's generation for the configured model now, unless
// it is current: what the evaluation and the tests wait for. Without an
// embeddings endpoint it does nothing.
func (s *Service) Index(ctx context.Context, cfg catconfig.Cat) error {
	e := cfg.Chat.Knowledge.Embeddings
	if e.BaseURL == "" || s.d.Embedder == nil {
		return nil
	}
	s.mu.Lock()
	idx := s.index(cfg.Name)
	s.mu.Unlock()
	idx.buildMu.Lock()
	defer idx.buildMu.Unlock()
	s.mu.Lock()
	if g := idx.current; g != nil && g.model == e.Model && !idx.stale {
		s.mu.Unlock()
		return nil
	}
	idx.building = true
	s.mu.Unlock()
	return s.build(ctx, cfg)
}

// build embeds every chunk of the CAT with the configured model (cached
// vectors reused, the rest in batches) and publishes the generation only
// when it is complete; a write during the build makes it go again.
func (s *Service) build(ctx context.Context, cfg catconfig.Cat) error {
	model := cfg.Chat.Knowledge.Embeddings.Model
	for {
		s.mu.Lock()
		start := s.index(cfg.Name).changes
		s.mu.Unlock()
		gen, err := s.generation(ctx, cfg)
		s.mu.Lock()
		idx := s.index(cfg.Name)
		if err != nil {
			idx.building, idx.failedAt = false, s.d.Clock.Now()
			s.mu.Unlock()
			s.d.Log.WarnContext(ctx, "knowledge: building the vector index failed; keyword search serves", "cat", cfg.Name, "model", model, "err", err)
			return err
		}
		if idx.changes == start {
			idx.current, idx.stale, idx.building, idx.failedAt = gen, false, false, time.Time{}
			s.mu.Unlock()
			s.d.Log.InfoContext(ctx, "knowledge: vector index ready", "cat", cfg.Name, "model", model, "chunks", len(gen.ids))
			return nil
		}
		s.mu.Unlock()
	}
}

func (s *Service) generation(ctx context.Context, cfg catconfig.Cat) (*generation, error) {
	passages, err := s.d.Store.AllPassages(ctx, cfg.Name)
	if err != nil {
		return nil, err
	}
	model := cfg.Chat.Knowledge.Embeddings.Model
	vecs, err := s.vectors(ctx, cfg, model, passages)
	if err != nil {
		return nil, err
	}
	g := &generation{model: model}
	for _, p := range passages {
		g.ids = append(g.ids, p.Chunk.ID)
		g.vecs = append(g.vecs, vecs[p.Chunk.Hash])
	}
	return g, nil
}

// vectors returns the model's unit vectors of the passages' texts: from
// the cache, the others embedded in batches and cached.
func (s *Service) vectors(ctx context.Context, cfg catconfig.Cat, model string, passages []knowledge.Passage) (map[string][]float32, error) {
	// The texts are made only for the vectors missing, a batch at a time,
	// not all held at once.
	first := map[string]int{} // hash -> its first passage
	var hashes []string
	for i, p := range passages {
		if _, ok := first[p.Chunk.Hash]; !ok {
			first[p.Chunk.Hash] = i
			hashes = append(hashes, p.Chunk.Hash)
		}
	}
	have, err := s.d.Store.Embeddings(ctx, model, hashes)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, h := range hashes {
		if _, ok := have[h]; !ok {
			missing = append(missing, h)
		}
	}
	for batch := range slices.Chunk(missing, s.d.BatchSize) {
		inputs := make([]string, len(batch))
		for i, h := range batch {
			inputs[i] = knowledge.IndexText(passages[first[h]].Chunk)
		}
		got, err := s.d.Embedder.Embed(ctx, knowledge.EmbedRequest{Cat: cfg.Name, BaseURL: cfg.Chat.Knowledge.Embeddings.BaseURL, Model: model, Inputs: inputs})
		if err != nil {
			return nil, err
		}
		fresh := map[string][]float32{}
		for i, h := range batch {
			if i < len(got) {
				fresh[h] = got[i]
				have[h] = got[i]
			}
		}
		if len(got) != len(batch) {
			return nil, errEmbedCount(len(batch), len(got))
		}
		if err := s.d.Store.PutEmbeddings(ctx, model, fresh); err != nil {
			return nil, err
		}
	}
	dims := -1
	for h, v := range have {
		if dims < 0 {
			dims = len(v)
		}
		if len(v) != dims || dims == 0 {
			return nil, errDims(model, dims, len(v))
		}
		have[h] = knowledge.Normalize(slices.Clone(v))
	}
	return have, nil
}

// added puts a new document's vectors into the current generation when it
// is of the configured model (embedding them now); otherwise a build is
// due and will include them.
func (s *Service) added(ctx context.Context, cfg catconfig.Cat, doc knowledge.Document) {
	e := cfg.Chat.Knowledge.Embeddings
	if e.BaseURL == "" || s.d.Embedder == nil {
		return
	}
	s.mu.Lock()
	idx := s.index(cfg.Name)
	idx.changes++
	gen := idx.current
	s.mu.Unlock()
	if gen == nil || gen.model != e.Model {
		s.startBuild(ctx, cfg)
		return
	}
	passages := make([]knowledge.Passage, len(doc.Chunks))
	for i, c := range doc.Chunks {
		passages[i] = knowledge.Passage{DocID: doc.ID, Chunk: c}
	}
	vecs, err := s.vectors(ctx, cfg, e.Model, passages)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && len(gen.vecs) > 0 && len(doc.Chunks) > 0 && len(vecs[doc.Chunks[0].Hash]) != len(gen.vecs[0]) {
		err = errDims(e.Model, len(gen.vecs[0]), len(vecs[doc.Chunks[0].Hash]))
	}
	if err != nil {
		s.d.Log.WarnContext(ctx, "knowledge: embedding a new document failed; it is found by keywords until the index is rebuilt", "cat", cfg.Name, "doc", doc.ID, "err", err)
		idx.stale = true
		return
	}
	cur := idx.current
	if cur == nil || cur.model != e.Model {
		return
	}
	// Appending in place past cur's length is safe: only the current
	// generation is ever appended to (under s.mu), and no generation
	// sharing its arrays is longer, so the slots written are no one's;
	// readers of cur keep reading its first len(cur.ids). Copying instead
	// would make loading n documents cost n² slots.
	next := &generation{model: cur.model, ids: cur.ids, vecs: cur.vecs}
	for _, c := range doc.Chunks {
		next.ids = append(next.ids, c.ID)
		next.vecs = append(next.vecs, vecs[c.Hash])
	}
	idx.current = next
}

// removed drops a deleted document's vectors from the current generation.
func (s *Service) removed(cat string, doc knowledge.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.index(cat)
	idx.changes++
	cur := idx.current
	if cur == nil {
		return
	}
	gone := map[string]bool{}
	for _, c := range doc.Chunks {
		gone[c.ID] = true
	}
	next := &generation{model: cur.model}
	for i, id := range cur.ids {
		if !gone[id] {
			next.ids = append(next.ids, id)
			next.vecs = append(next.vecs, cur.vecs[i])
		}
	}
	idx.current = next
}
