package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.Embedder = (*Embedder)(nil)

// EmbedTimeout bounds one embeddings call.
const EmbedTimeout = 60 * time.Second

// Embedder calls an OpenAI-compatible /v1/embeddings endpoint (the CAT's
// cat.knowledge.embeddings.base_url) for the document retrieval. Safe for
// concurrent use.
type Embedder struct{ o Options }

// NewEmbedder returns the embeddings adapter. Options.APIKey gives the
// key per CAT (catsrv passes CATSRV_EMBEDDINGS_API_KEY[__<CAT>]).
func NewEmbedder(o Options) *Embedder {
	if o.APIKey == nil {
		o.APIKey = func(string) string { return "" }
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Embedder{o: o}
}

// Embed implements ports.Embedder: one request for all the inputs, float
// vectors back in input order. A failure, a time-out or an answer of the
// wrong shape is errs.KindUnavailable.
func (e *Embedder) Embed(ctx context.Context, req knowledge.EmbedRequest) ([][]float32, error) {
	if req.BaseURL == "" {
		return nil, errs.New(errs.KindUnavailable, "no embeddings endpoint configured (cat.knowledge.embeddings.base_url)")
	}
	if len(req.Inputs) == 0 {
		return nil, nil
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(e.o.HTTPClient),
		option.WithBaseURL(req.BaseURL),
		option.WithMaxRetries(e.o.MaxRetries),
	}
	if key := e.o.APIKey(req.Cat); key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	ctx, cancel := context.WithTimeout(ctx, EmbedTimeout)
	defer cancel()
	svc := sdk.NewEmbeddingService(opts...)
	res, err := svc.New(ctx, sdk.EmbeddingNewParams{
		Model:          req.Model,
		Input:          sdk.EmbeddingNewParamsInputUnion{OfArrayOfStrings: req.Inputs},
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatFloat,
	})
	if err != nil {
		var apiErr *sdk.Error
		msg := "embeddings service failed"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			msg = "embeddings service timed out"
		case errors.As(err, &apiErr):
			msg = fmt.Sprintf("embeddings service answered %d", apiErr.StatusCode)
		}
		return nil, errs.Wrap(errs.KindUnavailable, err, msg)
	}
	out := make([][]float32, len(req.Inputs))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(out) || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, errs.New(errs.KindUnavailable, "embeddings service answered an embedding of index %d for %d inputs", d.Index, len(out))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	for i, v := range out {
		if v == nil {
			return nil, errs.New(errs.KindUnavailable, "embeddings service left input %d without a vector", i)
		}
	}
	return out, nil
}
