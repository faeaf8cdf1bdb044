package retrieval

import "github.com/catsrv/catsrv/core/errs"

func errEmbedCount(want, got int) error {
	return errs.New(errs.KindUnavailable, "embeddings service returned %d vectors for %d texts", got, want)
}

func errDims(model string, want, got int) error {
	return errs.New(errs.KindUnavailable, "embeddings of model %q have %d dimensions, then %d", model, want, got)
}
