package catconfig

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// Knowledge holds the cat.knowledge.* keys: the CAT's documents and how
// they are retrieved (see docs/knowledge.md).
type Knowledge struct {
	// Documents is a directory, relative to the configuration directory,
	// whose Markdown, text and HTML files are loaded as the CAT's
	// documents and re-read when they change; empty: none.
	Documents  string     `config:"documents" json:"documents"`
	Embeddings Embeddings `config:"embeddings" json:"embeddings"`
	// ChunkTokens is the token budget of a chunk.
	ChunkTokens int `config:"chunk_tokens" json:"chunk_tokens"`
	// TopK is how many passages a question gets.
	TopK int `config:"top_k" json:"top_k"`
	// MinScore is the least relevance (0 to 1) a passage needs to be
	// used: below it, no answer from documents.
	MinScore float64 `config:"min_score" json:"min_score"`
}

// Embeddings holds cat.knowledge.embeddings.*: an OpenAI-compatible
// /v1/embeddings endpoint and model. Empty BaseURL: keyword search only.
// The API key is not here: CATSRV_EMBEDDINGS_API_KEY[__<CAT>].
type Embeddings struct {
	BaseURL string `config:"base_url" json:"base_url"`
	Model   string `config:"model" json:"model"`
}

// Knowledge defaults and bounds.
const (
	DefaultChunkTokens = 500
	MinChunkTokens     = 50
	MaxChunkTokens     = 8000
	DefaultTopK        = 4
	MaxTopK            = 50
	DefaultMinScore    = 0.5
)

func defaultKnowledge() Knowledge {
	return Knowledge{ChunkTokens: DefaultChunkTokens, TopK: DefaultTopK, MinScore: DefaultMinScore}
}

// validate checks the cat.knowledge keys.
func (k Knowledge) validate() error {
	if d := k.Documents; d != "" {
		if filepath.IsAbs(d) || strings.HasPrefix(d, "/") || !filepath.IsLocal(d) {
			return errs.New(errs.KindInvalid, "cat.knowledge.documents: %q is not a directory inside the configuration directory (give a relative path without ..)", d)
		}
	}
	e := k.Embeddings
	if e.BaseURL != "" {
		if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errs.New(errs.KindInvalid, "cat.knowledge.embeddings.base_url: %q is not an http(s) URL without credentials", e.BaseURL)
		}
		if strings.TrimSpace(e.Model) == "" {
			return errs.New(errs.KindInvalid, "cat.knowledge.embeddings.model: must be set when cat.knowledge.embeddings.base_url is")
		}
	}
	switch {
	case k.ChunkTokens < MinChunkTokens || k.ChunkTokens > MaxChunkTokens:
		return errs.New(errs.KindInvalid, "cat.knowledge.chunk_tokens: %d is not between %d and %d", k.ChunkTokens, MinChunkTokens, MaxChunkTokens)
	case k.TopK < 1 || k.TopK > MaxTopK:
		return errs.New(errs.KindInvalid, "cat.knowledge.top_k: %d is not between 1 and %d", k.TopK, MaxTopK)
	case k.MinScore < 0 || k.MinScore > 1:
		return errs.New(errs.KindInvalid, "cat.knowledge.min_score: %v is not between 0 and 1", k.MinScore)
	}
	return nil
}
