package colindex

import (
	"context"
	"iter"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// Row is one stored api interaction as a Source reads it. The byte slices
// are only valid during the callback that receives the row.
type Row struct {
	ID     int64 // increasing in commit order
	Micros int64 // the time, in microseconds since the Unix epoch
	Cat    []byte
	Topic, Model, Persona,
	QuestionID, Question,
	AnswerID, Answer []byte
}

// Source reads the api interactions stored after a high-water mark.
type Source interface {
	// ReadSince calls fn with every api interaction whose id is above
	// after, in id order, and returns the highest id it passed to fn
	// (after itself when none). It stops at fn's first error.
	ReadSince(ctx context.Context, after int64, fn func(*Row) error) (int64, error)
}

// Log is an interaction log whose successful appends reach the index
// before Append returns, so this process reads its own writes. Total and
// Groups are the log's own (the raw path).
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
