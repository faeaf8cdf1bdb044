package ports

import (
	"context"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/knowledge"
)

// DocumentStore keeps CATs' documents, their chunks with a keyword index
// the database maintains on every write, and the embeddings of chunk
// texts, keyed by (content hash, model), so a text is embedded once per
// model whatever document holds it.
type DocumentStore interface {
	// PutDocument stores the document and its chunks, all or nothing,
	// and indexes the chunks for SearchChunks. A document already stored
	// under the same (Cat, ID) is left as it is: created is false.
	PutDocument(ctx context.Context, doc knowledge.Document) (created bool, err error)
	// Documents lists the CAT's documents without their chunks
	// (ChunkCount set), oldest first (ties by id).
	Documents(ctx context.Context, cat string) ([]knowledge.Document, error)
	// Document returns one document with its chunks in order;
	// errs.KindNotFound when the CAT has none with that id.
	Document(ctx context.Context, cat, id string) (knowledge.Document, error)
	// DeleteDocument removes the document, its chunks, their index
	// entries and the embeddings of texts no other chunk holds, in one
	// transaction; errs.KindNotFound when there is no such document.
	DeleteDocument(ctx context.Context, cat, id string) error
	// SearchChunks returns at most limit of the CAT's passages holding
	// any of the terms (lower-case words as knowledge.QueryTerms gives
	// them), best first by the index's own ranking.
	SearchChunks(ctx context.Context, cat string, terms []string, limit int) ([]knowledge.Passage, error)
	// Passages returns the CAT's passages with these chunk ids, in the
	// order asked; ids it does not hold are left out.
	Passages(ctx context.Context, cat string, chunkIDs []string) ([]knowledge.Passage, error)
	// AllPassages returns every passage of the CAT, by document then
	// chunk order: what a vector index is built from.
	AllPassages(ctx context.Context, cat string) ([]knowledge.Passage, error)
	// PutEmbeddings stores vectors by content hash for a model; a vector
	// already stored for (hash, model) is kept.
	PutEmbeddings(ctx context.Context, model string, vectors map[string][]float32) error
	// Embeddings returns the model's stored vectors for the hashes it
	// has; others are left out.
	Embeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error)
}

// Embedder turns texts into vectors through an embeddings service.
type Embedder interface {
	// Embed returns one vector per input, in order. Errors:
	// errs.KindUnavailable when the service failed or is not configured.
	Embed(ctx context.Context, req knowledge.EmbedRequest) ([][]float32, error)
}

// PassageSearcher gives a question the passages of a CAT's documents
// that answer it, as a reply's sources (core/knowledge/retrieval): the
// qa stage answers from the best one, the agent's knowledge tool lists
// them. No passage is no error.
type PassageSearcher interface {
	Search(ctx context.Context, cat catconfig.Cat, query string) ([]chat.Source, error)
}
