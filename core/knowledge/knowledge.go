// Package knowledge is a CAT's documents as retrieval sees them: parsing
// Markdown, plain text and HTML into structural blocks, chunking them by
// structure to about a token budget with overlap (counted by an offline
// BPE tokenizer), content-derived ids and hashes, reciprocal-rank fusion,
// the relevance a keyword hit has, and the check that a reply's [n]
// citations name sources actually supplied. Pure functions; storage and
// embeddings are ports (core/knowledge/retrieval is the use case).
package knowledge

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Formats a document can be uploaded in.
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
	FormatHTML     = "html"
)

// Document is one document of a CAT. Its ID derives from its content
// (ContentID), so the same text uploaded twice is one document.
type Document struct {
	Cat   string
	ID    string
	Title string
	URL   string
	// Origin names where it came from: "upload", or "dir:<file name>" for
	// a file of cat.knowledge.documents.
	Origin    string
	Format    string
	Bytes     int
	CreatedAt time.Time
	// Chunks is empty in lists; ChunkCount is always set.
	Chunks     []Chunk
	ChunkCount int
}

// Chunk is a passage of a document, the unit of retrieval.
type Chunk struct {
	// ID is "<document id>-<index>".
	ID    string
	Index int
	// HeadingPath is the titles of the sections it sits in, outermost
	// first.
	HeadingPath []string
	Text        string
	Tokens      int
	// Hash is the SHA-256 of Text in hex: the key of its embeddings.
	Hash string
}

// ContentID is the id of a document with this content: the first 128 bits
// of its SHA-256, in hex.
func ContentID(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:16])
}

// Hash is the SHA-256 of text, in hex.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// ChunkID names a document's chunk.
func ChunkID(docID string, index int) string {
	return docID + "-" + itoa(index)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// IndexText is what keyword search indexes of a chunk: its heading path
// and its text, so a question naming a section finds its passages.
func IndexText(c Chunk) string {
	out := ""
	for _, h := range c.HeadingPath {
		out += h + "\n"
	}
	return out + c.Text
}

// Passage is a chunk with the document it belongs to (the document
// without its chunks).
type Passage struct {
	DocID    string
	DocTitle string
	DocURL   string
	Chunk    Chunk
}

// EmbedRequest asks an embeddings service (cat.knowledge.embeddings) for
// the vectors of texts.
type EmbedRequest struct {
	Cat     string
	BaseURL string
	Model   string
	Inputs  []string
}
