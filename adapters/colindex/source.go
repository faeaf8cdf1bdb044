package colindex

import (
	"context"
	"iter"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// Log is an interaction log whose successful appends reach the index
// before Append returns, so this process reads its own writes, by a
// refresh after each: for a log that does not tell its commits (the
// in-memory reference). A log that does (ports.CommitTeller, the SQL
// store) is wired with TellCommits(index.Hold) instead, which counts the
// rows without reading them back. Answer is the log's own (the raw path).
type Log struct {
	ports.InteractionLog
	Index *Index
}

var _ ports.InteractionLog = Log{}

// Append stores the interactions through the log, then brings the index
// up to date. The interactions are committed once the log's Append
// succeeds; if the index cannot catch up then, it stays behind until the
// next successful Refresh (Follow retries), and Append still reports
// success.
func (l Log) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	n, err := l.InteractionLog.Append(ctx, interactions)
	if err != nil {
		return n, err
	}
	_ = l.Index.Refresh(ctx) // committed already: Follow catches up and reports
	return n, nil
}

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
