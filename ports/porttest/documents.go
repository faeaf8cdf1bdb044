package porttest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

// TestDocumentStore runs the contract of ports.DocumentStore against the
// adapter open creates (fresh and empty per case).
func TestDocumentStore(t *testing.T, open func(t *testing.T) ports.DocumentStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s ports.DocumentStore)
	}{
		{"PutAndRead", testDocPutAndRead},
		{"SameIDKeepsFirst", testDocSameID},
		{"ScopedByCat", testDocScoped},
		{"NotFound", testDocNotFound},
		{"SearchFindsAndRanks", testDocSearch},
		{"SearchSeesEveryWrite", testDocSearchFollowsWrites},
		{"Passages", testDocPassages},
		{"Embeddings", testDocEmbeddings},
		{"DeleteRemovesEverything", testDocDelete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var docT0 = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)

// testDoc builds a document of the CAT whose chunks have these texts,
// each under the heading path "Guide" > its first word.
func testDoc(cat, title string, at time.Time, texts ...string) knowledge.Document {
	all := title
	for _, t := range texts {
		all += "\x00" + t
	}
	d := knowledge.Document{
		Cat: cat, ID: knowledge.ContentID([]byte(all)), Title: title, URL: "https://example.com/" + title,
		Origin: "upload", Format: knowledge.FormatMarkdown, Bytes: len(all), CreatedAt: at, ChunkCount: len(texts),
	}
	for i, text := range texts {
		first, _, _ := strings.Cut(text, " ")
		d.Chunks = append(d.Chunks, knowledge.Chunk{
			ID: knowledge.ChunkID(d.ID, i), Index: i, HeadingPath: []string{"Guide", first},
			Text: text, Tokens: len(strings.Fields(text)), Hash: knowledge.Hash(text),
		})
	}
	return d
}

func put(t *testing.T, s ports.DocumentStore, d knowledge.Document) {
	t.Helper()
	created, err := s.PutDocument(t.Context(), d)
	if err != nil || !created {
		t.Fatalf("PutDocument(%s) = %v, %v; want created", d.Title, created, err)
	}
}

func passageIDs(ps []knowledge.Passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Chunk.ID
	}
	return out
}

func testDocPutAndRead(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "alpha", docT0, "reset the widget by holding the button", "install with apt", "```\ncode block\n\nkept\n```")
	b := testDoc("demo", "beta", docT0.Add(time.Second), "another text")
	put(t, s, b)
	put(t, s, a)
	got, err := s.Document(ctx, "demo", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("Document:\n got %+v\nwant %+v", got, a)
	}
	list, err := s.Documents(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	wantA, wantB := a, b
	wantA.Chunks, wantB.Chunks = nil, nil
	if !reflect.DeepEqual(list, []knowledge.Document{wantA, wantB}) {
		t.Errorf("Documents:\n got %+v\nwant %+v", list, []knowledge.Document{wantA, wantB})
	}
}

func testDocSameID(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "alpha", docT0, "some text")
	put(t, s, a)
	again := a
	again.Title, again.CreatedAt = "renamed", docT0.Add(time.Hour)
	created, err := s.PutDocument(ctx, again)
	if err != nil || created {
		t.Fatalf("second PutDocument = %v, %v; want not created", created, err)
	}
	got, err := s.Document(ctx, "demo", a.ID)
	if err != nil || got.Title != "alpha" || !got.CreatedAt.Equal(docT0) || len(got.Chunks) != 1 {
		t.Errorf("after the second put: %+v, %v", got, err)
	}
}

func testDocScoped(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "alpha", docT0, "shared words here")
	other := a
	other.Cat = "other"
	put(t, s, a)
	if list, _ := s.Documents(ctx, "other"); len(list) != 0 {
		t.Errorf("other CAT lists %d documents", len(list))
	}
	if _, err := s.Document(ctx, "other", a.ID); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("other CAT reads the document: %v", err)
	}
	if hits, _ := s.SearchChunks(ctx, "other", []string{"shared"}, 10); len(hits) != 0 {
		t.Errorf("other CAT finds %v", passageIDs(hits))
	}
	put(t, s, other) // the same content in another CAT is its own document
	if err := s.DeleteDocument(ctx, "other", a.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"shared"}, 10); len(hits) != 1 {
		t.Errorf("deleting in another CAT removed this one's: %v", passageIDs(hits))
	}
}

func testDocNotFound(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	if _, err := s.Document(ctx, "demo", "nope"); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("Document: %v", err)
	}
	if err := s.DeleteDocument(ctx, "demo", "nope"); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("DeleteDocument: %v", err)
	}
	if list, err := s.Documents(ctx, "demo"); err != nil || len(list) != 0 {
		t.Errorf("Documents of an empty CAT: %v, %v", list, err)
	}
}

func testDocSearch(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	d := testDoc("demo", "guide", docT0,
		"reset the password by holding the reset button",
		"install the widget with apt",
		"the password policy wants twelve characters",
		"nothing relevant at all",
	)
	put(t, s, d)
	hits, err := s.SearchChunks(ctx, "demo", []string{"reset", "password"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	ids := passageIDs(hits)
	if len(ids) != 2 || ids[0] != d.Chunks[0].ID || ids[1] != d.Chunks[2].ID {
		t.Errorf("search reset password = %v, want [%s %s]", ids, d.Chunks[0].ID, d.Chunks[2].ID)
	}
	if len(hits) > 0 && (hits[0].DocID != d.ID || hits[0].DocTitle != "guide" || hits[0].DocURL != d.URL || !reflect.DeepEqual(hits[0].Chunk, d.Chunks[0])) {
		t.Errorf("passage %+v", hits[0])
	}
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"reset", "password"}, 1); len(hits) != 1 {
		t.Errorf("limit 1 gave %d", len(hits))
	}
	// The heading path is searched too ("Guide" heads every chunk).
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"guide"}, 10); len(hits) != 4 {
		t.Errorf("heading search found %d, want 4", len(hits))
	}
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"zebra"}, 10); len(hits) != 0 {
		t.Errorf("absent word found %v", passageIDs(hits))
	}
	// Index syntax in a term is a word, not an operator.
	for _, odd := range []string{"or", "and", "not", "near", "a*", `"`, "':*", "|", "!"} {
		if _, err := s.SearchChunks(ctx, "demo", []string{odd, "reset"}, 10); err != nil {
			t.Errorf("term %q: %v", odd, err)
		}
	}
}

func testDocSearchFollowsWrites(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "a", docT0, "zebra crossing rules")
	put(t, s, a)
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"zebra"}, 10); len(hits) != 1 {
		t.Fatalf("first write: %v", passageIDs(hits))
	}
	b := testDoc("demo", "b", docT0, "zebra stripes")
	put(t, s, b)
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"zebra"}, 10); len(hits) != 2 {
		t.Errorf("second write: %v", passageIDs(hits))
	}
	if err := s.DeleteDocument(ctx, "demo", a.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"zebra"}, 10); len(hits) != 1 || hits[0].DocID != b.ID {
		t.Errorf("after delete: %v", passageIDs(hits))
	}
}

func testDocPassages(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "a", docT0, "one", "two", "three")
	b := testDoc("demo", "b", docT0.Add(time.Minute), "four")
	put(t, s, b)
	put(t, s, a)
	got, err := s.Passages(ctx, "demo", []string{a.Chunks[2].ID, "missing", b.Chunks[0].ID, a.Chunks[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if ids := passageIDs(got); !slices.Equal(ids, []string{a.Chunks[2].ID, b.Chunks[0].ID, a.Chunks[0].ID}) {
		t.Errorf("Passages = %v", ids)
	}
	all, err := s.AllPassages(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if ids := passageIDs(all); !slices.Equal(ids, []string{a.Chunks[0].ID, a.Chunks[1].ID, a.Chunks[2].ID, b.Chunks[0].ID}) {
		t.Errorf("AllPassages = %v", ids)
	}
	if other, _ := s.AllPassages(ctx, "other"); len(other) != 0 {
		t.Errorf("other CAT: %d passages", len(other))
	}
}

func testDocEmbeddings(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	v1 := []float32{0.25, -1.5, 3.1415927, 1e-30}
	v2 := []float32{1, 2}
	if err := s.PutEmbeddings(ctx, "m1", map[string][]float32{"h1": v1, "h2": v2}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings(ctx, "m2", map[string][]float32{"h1": v2}); err != nil {
		t.Fatal(err)
	}
	// A vector already stored is kept.
	if err := s.PutEmbeddings(ctx, "m1", map[string][]float32{"h1": {9, 9, 9, 9}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Embeddings(ctx, "m1", []string{"h1", "h2", "h3"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string][]float32{"h1": v1, "h2": v2}) {
		t.Errorf("m1 = %v", got)
	}
	if got, _ := s.Embeddings(ctx, "m2", []string{"h1", "h2"}); !reflect.DeepEqual(got, map[string][]float32{"h1": v2}) {
		t.Errorf("m2 = %v", got)
	}
}

func testDocDelete(t *testing.T, s ports.DocumentStore) {
	ctx := t.Context()
	a := testDoc("demo", "a", docT0, "unique alpha words", "shared passage text")
	b := testDoc("demo", "b", docT0, "shared passage text")
	put(t, s, a)
	put(t, s, b)
	hashes := []string{a.Chunks[0].Hash, a.Chunks[1].Hash}
	vecs := map[string][]float32{hashes[0]: {1, 0}, hashes[1]: {0, 1}}
	for _, m := range []string{"m1", "m2"} {
		if err := s.PutEmbeddings(ctx, m, vecs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteDocument(ctx, "demo", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Document(ctx, "demo", a.ID); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("deleted document reads: %v", err)
	}
	if hits, _ := s.SearchChunks(ctx, "demo", []string{"unique", "alpha"}, 10); len(hits) != 0 {
		t.Errorf("deleted chunks found: %v", passageIDs(hits))
	}
	if ps, _ := s.Passages(ctx, "demo", passageIDs([]knowledge.Passage{{Chunk: a.Chunks[0]}, {Chunk: a.Chunks[1]}})); len(ps) != 0 {
		t.Errorf("deleted passages read: %v", passageIDs(ps))
	}
	for _, m := range []string{"m1", "m2"} {
		got, _ := s.Embeddings(ctx, m, hashes)
		// The shared text is still held by b: its vector stays.
		if !reflect.DeepEqual(got, map[string][]float32{hashes[1]: {0, 1}}) {
			t.Errorf("%s after delete: %v", m, got)
		}
	}
	if err := s.DeleteDocument(ctx, "demo", b.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Embeddings(ctx, "m1", hashes); len(got) != 0 {
		t.Errorf("vectors left after the last holder went: %v", got)
	}
	if list, _ := s.Documents(ctx, "demo"); len(list) != 0 {
		t.Errorf("documents left: %d", len(list))
	}
}
