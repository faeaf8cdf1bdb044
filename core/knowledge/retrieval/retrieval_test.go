package retrieval_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/embedtest"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
)

var docs = map[string]string{
	"reset.md":   "# Resetting the widget\n\nTo reset the widget, hold the power button for ten seconds until the light blinks.\n\n## Passwords\n\nA forgotten password is replaced from the settings page: choose Security, then Change password.\n",
	"install.md": "# Installation\n\nInstall the widget with the package manager: apt install widget.\n\n## Requirements\n\nThe widget needs two gigabytes of memory and a network connection.\n",
	"billing.md": "# Billing\n\nInvoices are sent on the first day of each month. Refunds take five business days.\n",
}

type fixture struct {
	svc       *retrieval.Service
	store     *memstore.Documents
	srv       *embedtest.Server
	cfg       catconfig.Cat
	ids       map[string]string
	mu        sync.Mutex
	fallbacks []string
}

func newFixture(t *testing.T, embeddings bool) *fixture {
	t.Helper()
	f := &fixture{store: memstore.NewDocuments(), srv: embedtest.Start(), cfg: catconfig.Defaults("demo"), ids: map[string]string{}}
	t.Cleanup(f.srv.Close)
	if embeddings {
		f.cfg.Chat.Knowledge.Embeddings = catconfig.Embeddings{BaseURL: f.srv.BaseURL(), Model: "m1"}
	}
	var err error
	f.svc, err = retrieval.New(retrieval.Deps{
		Store: f.store, Embedder: openai.NewEmbedder(openai.Options{}), Clock: clock.NewFixed(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		OnFallback: func(cat, reason string) { f.mu.Lock(); f.fallbacks = append(f.fallbacks, reason); f.mu.Unlock() },
		BatchSize:  2,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.svc.Close)
	for _, name := range []string{"reset.md", "install.md", "billing.md"} {
		doc, created, err := f.svc.Ingest(t.Context(), f.cfg, retrieval.Upload{Filename: name, Format: knowledge.FormatMarkdown, Content: []byte(docs[name])})
		if err != nil || !created {
			t.Fatalf("ingest %s: %v %v", name, created, err)
		}
		f.ids[name] = doc.ID
	}
	return f
}

func docIDs(hits []retrieval.Hit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.Passage.DocID) {
			out = append(out, h.Passage.DocID)
		}
	}
	return out
}

func TestKeywordSearchCitesTheRightDocument(t *testing.T) {
	f := newFixture(t, false)
	ctx := t.Context()
	src, err := f.svc.Search(ctx, f.cfg, "How do I reset the widget?")
	if err != nil {
		t.Fatal(err)
	}
	if len(src) == 0 || src[0].ID != f.ids["reset.md"] || src[0].Kind != "document" || src[0].Title != "Resetting the widget" || src[0].ChunkID == "" {
		t.Fatalf("sources %+v", src)
	}
	if src[0].Snippet != "To reset the widget, hold the power button for ten seconds until the light blinks." || src[0].Score < f.cfg.Chat.Knowledge.MinScore {
		t.Errorf("snippet %q score %v", src[0].Snippet, src[0].Score)
	}
	if src, _ := f.svc.Search(ctx, f.cfg, "quantum banana telescope"); len(src) != 0 {
		t.Errorf("unrelated question cited %+v", src)
	}
	if len(f.fallbacks) != 0 {
		t.Errorf("no endpoint configured is no fallback: %v", f.fallbacks)
	}
}

func TestSameContentSameID(t *testing.T) {
	f := newFixture(t, true)
	before := f.srv.Inputs.Load()
	doc, created, err := f.svc.Ingest(t.Context(), f.cfg, retrieval.Upload{Title: "again", Format: knowledge.FormatMarkdown, Content: []byte(docs["billing.md"])})
	if err != nil || created || doc.ID != f.ids["billing.md"] || doc.Title != "Billing" {
		t.Errorf("again: %+v %v %v", doc, created, err)
	}
	if after := f.srv.Inputs.Load(); after != before {
		t.Errorf("embedded %d texts for content already stored", after-before)
	}
	if _, _, err := f.svc.Ingest(t.Context(), f.cfg, retrieval.Upload{Format: knowledge.FormatMarkdown, Content: []byte("  \n")}); errs.KindOf(err) != errs.KindInvalid {
		t.Errorf("empty: %v", err)
	}
}

// Vector search finds what keywords miss (other forms of the words), and
// hybrid keeps both.
func TestVectorAndHybrid(t *testing.T) {
	f := newFixture(t, true)
	ctx := t.Context()
	if err := f.svc.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	q := "passwords forgotten"
	kw, _ := f.svc.Rank(ctx, f.cfg, "installing requirement", retrieval.Keyword, 4)
	if len(kw) != 0 {
		t.Errorf("keyword search matched other word forms: %v", docIDs(kw))
	}
	vec, err := f.svc.Rank(ctx, f.cfg, "installing requirement", retrieval.Vector, 4)
	if err != nil || len(vec) == 0 || vec[0].Passage.DocID != f.ids["install.md"] {
		t.Errorf("vector: %v %v", docIDs(vec), err)
	}
	hy, _ := f.svc.Rank(ctx, f.cfg, q, retrieval.Hybrid, 4)
	if len(hy) == 0 || hy[0].Passage.DocID != f.ids["reset.md"] {
		t.Errorf("hybrid: %v", docIDs(hy))
	}
	if len(f.fallbacks) != 0 {
		t.Errorf("fallbacks %v", f.fallbacks)
	}
}

// Embeddings are cached by (content hash, model): rebuilding embeds
// nothing again; a new model embeds everything once.
func TestEmbeddingsCachedAndBatched(t *testing.T) {
	f := newFixture(t, true)
	ctx := t.Context()
	if err := f.svc.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for _, id := range f.ids {
		d, _ := f.store.Document(ctx, "demo", id)
		chunks += len(d.Chunks)
	}
	if got := f.srv.Inputs.Load(); got != int64(chunks) {
		t.Errorf("embedded %d texts for %d chunks", got, chunks)
	}
	if calls := f.srv.Calls.Load(); calls != int64((chunks+1)/2) {
		t.Errorf("%d calls for %d chunks in batches of 2", calls, chunks)
	}
	// A fresh service (a restart) finds every vector in the cache.
	svc2, _ := retrieval.New(retrieval.Deps{Store: f.store, Embedder: openai.NewEmbedder(openai.Options{}), Clock: clock.NewFixed(time.Now())})
	if err := svc2.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	if got := f.srv.Inputs.Load(); got != int64(chunks) {
		t.Errorf("a rebuild embedded %d more texts", got-int64(chunks))
	}
}

// With the service down, answers come from keywords, the fallback is
// counted, and no error reaches the user.
func TestEmbeddingsDownFallsBackToKeywords(t *testing.T) {
	f := newFixture(t, true)
	ctx := t.Context()
	if err := f.svc.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	f.srv.SetDown(true)
	src, err := f.svc.Search(ctx, f.cfg, "reset the widget")
	if err != nil || len(src) == 0 || src[0].ID != f.ids["reset.md"] {
		t.Fatalf("down: %+v %v", src, err)
	}
	if !slices.Equal(f.fallbacks, []string{"embed_failed"}) {
		t.Errorf("fallbacks %v", f.fallbacks)
	}
}

// A changed model re-embeds in the background; the old generation serves
// until the new one is complete, then the new one does.
func TestModelChangeBuildsNewGeneration(t *testing.T) {
	f := newFixture(t, true)
	ctx := t.Context()
	if err := f.svc.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	base := f.srv.Inputs.Load()
	next := f.cfg
	next.Chat.Knowledge.Embeddings.Model = "m2-small" // another dimension too
	hits, err := f.svc.Rank(ctx, next, "installing requirement", retrieval.Vector, 4)
	if err != nil || len(hits) == 0 || hits[0].Passage.DocID != f.ids["install.md"] {
		t.Fatalf("during the rebuild: %v %v", docIDs(hits), err)
	}
	f.svc.Close() // waits for the background build
	if f.srv.Inputs.Load() <= base+1 {
		t.Fatalf("the new model embedded nothing")
	}
	before := f.srv.Inputs.Load()
	hits, _ = f.svc.Rank(ctx, next, "installing requirement", retrieval.Vector, 4)
	if len(hits) == 0 || hits[0].Passage.DocID != f.ids["install.md"] {
		t.Errorf("after the rebuild: %v", docIDs(hits))
	}
	if f.srv.Inputs.Load() != before+1 {
		t.Errorf("a search after the rebuild embedded %d texts, want the question only", f.srv.Inputs.Load()-before)
	}
	if err := f.svc.Index(ctx, next); err != nil {
		t.Fatal(err)
	}
	if f.srv.Inputs.Load() != before+1 {
		t.Errorf("the generation was not current")
	}
}

// Deleting a document removes it from every ranking and its vectors from
// the cache.
func TestDeleteRemovesEverywhere(t *testing.T) {
	f := newFixture(t, true)
	ctx := t.Context()
	if err := f.svc.Index(ctx, f.cfg); err != nil {
		t.Fatal(err)
	}
	doc, _ := f.store.Document(ctx, "demo", f.ids["install.md"])
	before, _ := f.svc.VectorIDs("demo")
	if err := f.svc.Delete(ctx, "demo", doc.ID); err != nil {
		t.Fatal(err)
	}
	ids, vectors := f.svc.VectorIDs("demo")
	if len(ids) != len(before)-len(doc.Chunks) || vectors != len(ids) {
		t.Errorf("in-memory index: %d ids and %d vectors after the delete, %d before, %d chunks deleted", len(ids), vectors, len(before), len(doc.Chunks))
	}
	for _, c := range doc.Chunks {
		if slices.Contains(ids, c.ID) {
			t.Errorf("chunk %s still in the in-memory index", c.ID)
		}
	}
	for _, mode := range []retrieval.Mode{retrieval.Keyword, retrieval.Vector, retrieval.Hybrid} {
		hits, _ := f.svc.Rank(ctx, f.cfg, "install the widget requirements", mode, 10)
		if slices.Contains(docIDs(hits), doc.ID) {
			t.Errorf("%s still finds the deleted document", mode)
		}
	}
	var hashes []string
	for _, c := range doc.Chunks {
		hashes = append(hashes, c.Hash)
	}
	if left, _ := f.store.Embeddings(ctx, "m1", hashes); len(left) != 0 {
		t.Errorf("%d vectors left", len(left))
	}
	if err := f.svc.Delete(ctx, "demo", doc.ID); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("second delete: %v", err)
	}
	// A document added after the index was built is searchable by vector at once.
	added, _, err := f.svc.Ingest(ctx, f.cfg, retrieval.Upload{Format: knowledge.FormatText, Content: []byte("Volcanoes erupt basalt lava.")})
	if err != nil {
		t.Fatal(err)
	}
	hits, _ := f.svc.Rank(ctx, f.cfg, "volcanic eruptions", retrieval.Vector, 2)
	if len(hits) == 0 || hits[0].Passage.DocID != added.ID {
		t.Errorf("new document by vector: %v", docIDs(hits))
	}
	_ = context.Background
}

func TestSyncDirectory(t *testing.T) {
	f := newFixture(t, false)
	ctx := t.Context()
	files := []retrieval.DirFile{{Name: "a.md", Content: []byte("# A\n\nAlpha text.")}, {Name: "b.txt", Content: []byte("Bravo text.")}}
	added, removed, err := f.svc.SyncDirectory(ctx, f.cfg, files)
	if err != nil || added != 2 || removed != 0 {
		t.Fatalf("first sync: %d %d %v", added, removed, err)
	}
	if added, removed, err := f.svc.SyncDirectory(ctx, f.cfg, files); err != nil || added != 0 || removed != 0 {
		t.Errorf("same files: %d %d %v", added, removed, err)
	}
	// b changes, a goes, a bad file is reported and skipped.
	files = []retrieval.DirFile{{Name: "b.txt", Content: []byte("Bravo text, changed.")}, {Name: "c.html", Content: []byte("\xff")}}
	added, removed, err = f.svc.SyncDirectory(ctx, f.cfg, files)
	if err == nil || added != 1 || removed != 2 {
		t.Errorf("changed: %d %d %v", added, removed, err)
	}
	docs, _ := f.svc.Documents(ctx, "demo")
	var dir []string
	for _, d := range docs {
		if d.Origin != "upload" {
			dir = append(dir, d.Origin+"|"+d.Title)
		}
	}
	if !slices.Equal(dir, []string{"dir:b.txt|b.txt"}) {
		t.Errorf("directory documents %v", dir)
	}
	if len(docs) != 4 { // the three uploads stay
		t.Errorf("%d documents", len(docs))
	}
}
