package colindex

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/ports"
)

// Tokens is the agent's token counter (ports.TokenUsage): a CAT's tokens
// since the start of a UTC day, the monthly budget's question, are summed
// from the index's cube (a few thousand cells, not the month's rows); a
// user's tokens or any other start are asked of the store's counter. Like
// every count of the index, it sees this process's writes when they
// return and other instances' within a poll.
type Tokens struct {
	ports.TokenUsage
	Index *Index
}

var _ ports.TokenUsage = Tokens{}

// TokensSince returns the input and output tokens of the CAT's api
// interactions at or after since, of one user's when userID is set.
func (t Tokens) TokensSince(ctx context.Context, cat, userID string, since time.Time) (int64, error) {
	micros := since.UnixMicro()
	if userID != "" || since.Nanosecond()%1000 != 0 || micros%dayMicros != 0 {
		return t.TokenUsage.TokensSince(ctx, cat, userID, since)
	}
	return t.Index.tokensSince(cat, dayOf(micros)), nil
}

// tokensSince sums the input and output tokens of the CAT's cube cells
// from the day on.
func (x *Index) tokensSince(cat string, day int64) int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.cats[cat]
	if c == nil {
		return 0
	}
	var n int64
	for _, dc := range c.cube.days[c.cube.search(day):] {
		for _, cl := range dc.cells {
			n += cl.input + cl.output
		}
	}
	return n
}
