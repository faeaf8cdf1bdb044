package memstore

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/knowledge"
)

// Deleting a CAT's documents leaves no chunk, posting, word count or
// vector behind, while a text another document holds keeps its vector
// until that one goes too.
func TestDeleteLeavesNothing(t *testing.T) {
	ctx := t.Context()
	d := NewDocuments()
	mk := func(title string, texts ...string) knowledge.Document {
		doc := knowledge.Document{Cat: "demo", ID: knowledge.ContentID([]byte(title)), Title: title, CreatedAt: time.Unix(1, 0)}
		for i, text := range texts {
			doc.Chunks = append(doc.Chunks, knowledge.Chunk{ID: knowledge.ChunkID(doc.ID, i), Index: i, HeadingPath: []string{title}, Text: text, Hash: knowledge.Hash(text)})
		}
		return doc
	}
	a := mk("a", "unique alpha words", "shared passage text")
	b := mk("b", "shared passage text")
	vecs := map[string][]float32{}
	for _, doc := range []knowledge.Document{a, b} {
		if _, err := d.PutDocument(ctx, doc); err != nil {
			t.Fatal(err)
		}
		for _, c := range doc.Chunks {
			vecs[c.Hash] = []float32{1, 2}
		}
	}
	for _, m := range []string{"m1", "m2"} {
		if err := d.PutEmbeddings(ctx, m, vecs); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteDocument(ctx, "demo", a.ID); err != nil {
		t.Fatal(err)
	}
	c := d.cats["demo"]
	if len(c.docs) != 1 || len(c.chunks) != 1 || len(d.vectors) != 2 {
		t.Errorf("after the first delete: %d documents, %d chunks, %d vectors; want 1, 1, 2", len(c.docs), len(c.chunks), len(d.vectors))
	}
	if err := d.DeleteDocument(ctx, "demo", b.ID); err != nil {
		t.Fatal(err)
	}
	if len(c.docs) != 0 || len(c.chunks) != 0 || len(c.postings) != 0 || c.words != 0 || len(d.vectors) != 0 {
		t.Errorf("left behind: %d documents, %d chunks, %d posting lists, %d words, %d vectors",
			len(c.docs), len(c.chunks), len(c.postings), c.words, len(d.vectors))
	}
}
