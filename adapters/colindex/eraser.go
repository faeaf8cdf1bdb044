package colindex

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// Eraser is an interaction eraser whose deletions reach the index before
// DeleteInteractions returns, so this process reads its own deletions.
// The source must report them through its Deletions.
type Eraser struct {
	ports.InteractionEraser
	Index *Index
}

var _ ports.InteractionEraser = Eraser{}

// DeleteInteractions deletes through the eraser, then brings the index up
// to date, also after a deletion that stopped part way (its batches are
// committed). If the index cannot catch up then, Follow does later.
func (e Eraser) DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error) {
	n, err := e.InteractionEraser.DeleteInteractions(ctx, d, batch)
	if n > 0 {
		_ = e.Index.Refresh(context.WithoutCancel(ctx)) // committed already: Follow catches up and reports
	}
	return n, err
}

// Feedback is a feedback recorder whose changes reach the index before
// SetFeedback returns, so this process reads its own feedback. The
// source must report them through its Ratings.
type Feedback struct {
	ports.FeedbackRecorder
	Index *Index
}

var _ ports.FeedbackRecorder = Feedback{}

// SetFeedback sets the feedback through the recorder, then brings the
// index up to date. If the index cannot catch up then, Follow does later.
func (f Feedback) SetFeedback(ctx context.Context, cat, interactionID string, fb analytics.Feedback) error {
	if err := f.FeedbackRecorder.SetFeedback(ctx, cat, interactionID, fb); err != nil {
		return err
	}
	_ = f.Index.Refresh(context.WithoutCancel(ctx)) // committed already: Follow catches up and reports
	return nil
}
