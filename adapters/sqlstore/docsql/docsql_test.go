package docsql_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/docsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// docsComponent is the documents schema, for sqltest.Open to bring up
// to date (or find so in a pooled schema).
var docsComponent = sqltest.Component{Name: docsql.Component, Migrate: func(ctx context.Context, s *sqlstore.Store) error {
	_, err := docsql.Open(ctx, s)
	return err
}}

func TestDocumentContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestDocumentStore(t, func(t *testing.T) ports.DocumentStore {
				s := sqltest.Open(t, b.DSN(t), docsComponent)
				if _, err := docsql.Open(t.Context(), s); err != nil {
					t.Fatal(err)
				}
				d, err := docsql.Open(t.Context(), s) // a second Open finds the schema current
				if err != nil {
					t.Fatalf("second Open: %v", err)
				}
				return d
			})
		})
	}
}

// TestMigrationKeepsTheIndex opens a database of the first schema, with
// documents of two CATs in it, at the current one: the keyword index
// holds the old chunks, each found in its own CAT only, and follows the
// writes after.
func TestMigrationKeepsTheIndex(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			ctx := t.Context()
			s := sqltest.Open(t, b.DSN(t))
			old, err := docsql.OpenAtVersion(ctx, s, 1)
			if err != nil {
				t.Fatal(err)
			}
			a := doc("demo", "reset the hub by holding its button", "pair a sensor")
			o := doc("other", "reset the router")
			for _, d := range []knowledge.Document{a, o} {
				if _, err := old.PutDocument(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			st, err := docsql.Open(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := st.SearchChunks(ctx, "demo", []string{"reset", "sensor"}, 10)
			if err != nil || len(hits) != 2 || hits[0].DocID != a.ID || hits[1].DocID != a.ID {
				t.Fatalf("after the migration: %v, %v", hits, err)
			}
			if hits, _ := st.SearchChunks(ctx, "other", []string{"reset"}, 10); len(hits) != 1 || hits[0].DocID != o.ID {
				t.Errorf("other CAT: %v", hits)
			}
			if err := st.DeleteDocument(ctx, "demo", a.ID); err != nil {
				t.Fatal(err)
			}
			if hits, _ := st.SearchChunks(ctx, "demo", []string{"reset"}, 10); len(hits) != 0 {
				t.Errorf("deleted chunks found: %v", hits)
			}
		})
	}
}

// doc is a document of the CAT with one chunk per text.
func doc(cat string, texts ...string) knowledge.Document {
	d := knowledge.Document{Cat: cat, Title: texts[0], Origin: "upload", Format: knowledge.FormatText, CreatedAt: time.Unix(1, 0).UTC()}
	d.ID = knowledge.ContentID([]byte(strings.Join(texts, "\x00")))
	for i, text := range texts {
		d.Chunks = append(d.Chunks, knowledge.Chunk{ID: knowledge.ChunkID(d.ID, i), Index: i, Text: text, Tokens: 5, Hash: knowledge.Hash(text)})
	}
	d.ChunkCount = len(d.Chunks)
	return d
}

// TestDeleteLeavesNoRow deletes a CAT's documents and counts the rows of
// every documents table, the keyword index included: a text another
// document (of any CAT) holds keeps its vector until that one goes too,
// and nothing else is left.
func TestDeleteLeavesNoRow(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			ctx := t.Context()
			s := sqltest.Open(t, b.DSN(t), docsComponent)
			st, err := docsql.Open(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			tables := []string{"doc_documents", "doc_chunks", "doc_embeddings"}
			if s.Dialect() == sqlstore.DialectSQLite {
				tables = append(tables, "doc_words") // PostgreSQL's index is a column of doc_chunks
			}
			count := func() map[string]int {
				out := map[string]int{}
				for _, table := range tables {
					var n int
					if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
						t.Fatal(err)
					}
					out[table] = n
				}
				return out
			}
			a := doc("demo", "unique alpha words", "shared passage text")
			o := doc("other", "shared passage text", "other words")
			vecs := map[string][]float32{}
			for _, d := range []knowledge.Document{a, o} {
				if _, err := st.PutDocument(ctx, d); err != nil {
					t.Fatal(err)
				}
				for _, c := range d.Chunks {
					vecs[c.Hash] = []float32{1, 2}
				}
			}
			for _, m := range []string{"m1", "m2"} {
				if err := st.PutEmbeddings(ctx, m, vecs); err != nil {
					t.Fatal(err)
				}
			}
			want := func(docs, chunks, vectors int) map[string]int {
				w := map[string]int{"doc_documents": docs, "doc_chunks": chunks, "doc_embeddings": vectors}
				if len(tables) == 4 {
					w["doc_words"] = chunks
				}
				return w
			}
			if got := count(); !reflect.DeepEqual(got, want(2, 4, 6)) {
				t.Fatalf("before: %v", got)
			}
			if err := st.DeleteDocument(ctx, "demo", a.ID); err != nil {
				t.Fatal(err)
			}
			// The shared text's two vectors stay: the other CAT holds it.
			if got := count(); !reflect.DeepEqual(got, want(1, 2, 4)) {
				t.Errorf("after the first delete: %v", got)
			}
			if err := st.DeleteDocument(ctx, "other", o.ID); err != nil {
				t.Fatal(err)
			}
			if got := count(); !reflect.DeepEqual(got, want(0, 0, 0)) {
				t.Errorf("left behind: %v", got)
			}
		})
	}
}
