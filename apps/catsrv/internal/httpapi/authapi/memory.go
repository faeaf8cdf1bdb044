package authapi

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// getMemory returns the caller's memory.
func (a *authAPI) getMemory(ctx context.Context, _ *struct{}) (*memoryOutput, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	m, err := a.d.Memory.Get(ctx, c.Subject)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	return &memoryOutput{Body: memoryBody(m)}, nil
}

// postMemory merges {"preferences": {...}} into the caller's memory; a key
// set to null is removed.
func (a *authAPI) postMemory(ctx context.Context, _ *struct{}) (*memoryOutput, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	r, err := base.RequestOf(ctx)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	// A body may carry removals besides the stored total, so it may be
	// somewhat larger than the limit; far larger is refused unread.
	limit := int64(2*a.d.Memory.Limits().MaxTotalBytes + 4096)
	w := base.ResponseOf(ctx) // nil is fine: the connection is then kept
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, a.memoryError(ctx, errs.New(errs.KindTooLarge, "body larger than %d bytes", limit))
	}
	if err != nil {
		return nil, a.memoryError(ctx, errs.New(errs.KindInvalid, "cannot read the body"))
	}
	m, err := a.d.Memory.Update(ctx, c.Subject, raw)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	return &memoryOutput{Body: memoryBody(m)}, nil
}

// deleteMemory clears the caller's memory.
func (a *authAPI) deleteMemory(ctx context.Context, _ *struct{}) (*memoryOutput, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.memoryError(ctx, err)
	}
	if err := a.d.Memory.Clear(ctx, c.Subject); err != nil {
		return nil, a.memoryError(ctx, err)
	}
	return &memoryOutput{Body: memoryBody(auth.Memory{})}, nil
}
