// Package ports declares the interfaces the core needs from the outside
// world, one role each. Adapters implement them; core services take them in
// their constructors.
//
// Mocks for isolating core logic are generated into ports/mocks with moq.
package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/ports_moq.go . Clock CatDirectory InteractionLog InteractionEraser RollupStore InteractionFeed

import (
	"context"
	"iter"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
)

// Clock tells the time. Core code never calls time.Now directly, so tests
// can hold time still.
type Clock interface {
	Now() time.Time
}

// CatDirectory is the source of CAT configurations.
type CatDirectory interface {
	// Cat returns the named CAT's configuration, or an error of kind
	// errs.KindNotFound when no such CAT is configured.
	Cat(ctx context.Context, name string) (catconfig.Cat, error)
	// Cats returns every configured CAT, ordered by name.
	Cats(ctx context.Context) ([]catconfig.Cat, error)
}

// Aggregator answers analytics queries over the api interactions, one
// call per question. Implementations must agree exactly with
// analytics.CountAnswer, the reference.
type Aggregator interface {
	// Answer counts the wanted parts of the query's answer, all from one
	// state of the store's rows (an answer never counts part of a write
	// committed while it was counted): the total under every filter and
	// each wanted dimension's groups under every filter but its own
	// (selective filtering, analytics.Query.SelectionFor). The question
	// and answer lists of a query with a limit hold exactly its first
	// q.Limit groups in analytics.SortGroups order; the other lists are in
	// no particular order. Parts not wanted are left zero.
	Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error)
}

// InteractionLog is the raw log of interactions: it stores them and counts
// over the raw rows.
type InteractionLog interface {
	// Append stores every interaction the sequence yields, normalized, in
	// one transaction that also updates the rollups: all or nothing. If the
	// sequence yields an error, nothing is stored and that error is
	// returned; an invalid interaction (analytics.Interaction.Validate)
	// stores nothing and fails with errs.KindInvalid. It returns how many
	// interactions were stored.
	Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error)
	Aggregator
}

// InteractionEraser deletes interactions for retention and erasure.
type InteractionEraser interface {
	// DeleteInteractions deletes every stored interaction (of any event
	// kind) that d selects (analytics.Deletion.Selects) and returns how
	// many. It deletes at most batch interactions per transaction (batch
	// <= 0: a store default), each batch committed on its own and, like an
	// Append, seen by every reader at once, with the rollups and every
	// follower of the log kept equal to the reference over the rows that
	// remain; it repeats until none is left or ctx ends. A deletion that
	// fails Validate is errs.KindInvalid and deletes nothing.
	DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error)
}

// RollupStore answers the same counts as InteractionLog from pre-aggregated
// rollups that every Append keeps in step.
type RollupStore interface {
	Aggregator
}

// FeedRow is one stored api interaction as an InteractionFeed reads it.
// The byte slices are only valid during the callback that receives the
// row.
type FeedRow struct {
	ID     int64 // unique; not in commit order when writers commit concurrently
	Micros int64 // the time, in microseconds since the Unix epoch
	Cat    []byte
	Topic, Model, Persona,
	QuestionID, Question,
	AnswerID, Answer []byte
}

// InteractionFeed reads the api interactions stored since a position in
// the log: what a derived store (an in-process index) follows the log by.
type InteractionFeed interface {
	// ReadSince calls fn with the api interactions committed since the
	// position after (0: the start of the log) and returns the position
	// to read from next (after itself when nothing moved). Writers may
	// commit concurrently and out of id order: a reader that starts at 0
	// and passes each call the position the previous one returned is
	// given every committed interaction exactly once, none skipped, none
	// repeated, though a row may first come a read or two after its
	// commit (while transactions that began before it are still
	// running). A position is opaque: an implementation may count ids,
	// transactions or anything else that only grows. ReadSince stops at
	// fn's first error and then returns after: a reader must drop what
	// that call passed to fn, or it counts those rows again.
	ReadSince(ctx context.Context, after int64, fn func(*FeedRow) error) (int64, error)
}
