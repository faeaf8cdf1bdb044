package colindex

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
)

// Feed is the log the index follows: the api interactions committed
// since a position. A reader that starts at 0 and passes each call the
// position the previous one returned is given every committed row exactly
// once, however writers' commits interleave (a row may come a read or two
// after its commit). A position is opaque and only grows. ReadSince stops
// at fn's first error and then returns after.
type Feed interface {
	ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error)
}

// Snapshot is a Feed's fast first read: every api row of one committed
// state (without ids), the position to follow the feed from, and the
// rows of that state the feed will give again from there, by id with
// their CAT (the index drops them when they come).
type Snapshot interface {
	ReadSnapshot(ctx context.Context, fn func(*analytics.FeedRow) error) (after int64, given map[int64]string, err error)
}

// Deletions is a Feed whose rows can be deleted. ReadDeletions returns
// the highest deletion generation above after (after itself when none)
// and the CATs that lost api rows in those deletions, sorted; generations
// grow in commit order. ReadCat gives every api row of the CAT that the
// feed had given by position upTo, from one read.
type Deletions interface {
	ReadDeletions(ctx context.Context, after int64) (generation int64, cats []string, err error)
	ReadCat(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error
}

// Ratings is a Feed whose rows' feedback can change after they are given.
// ReadRatingChanges returns the highest rating generation above after
// (after itself when none) and the CATs whose rows' ratings changed in
// those generations, sorted; generations grow in commit order. ReadRated
// gives every api row of the CAT with a rating (Rating not 0) that the
// feed had given by position upTo, from one read; its rows may carry the
// question's and answer's keys in place of their texts, and no usage (the
// index counts rated rows by key). The index calls ReadRated for several
// CATs at once.
type Ratings interface {
	ReadRatingChanges(ctx context.Context, after int64) (generation int64, cats []string, err error)
	ReadRated(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error
}
