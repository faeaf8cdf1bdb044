// Package ports declares the interfaces the core needs from the outside
// world, one role each. Adapters implement them; core services take them in
// their constructors.
//
// Mocks for isolating core logic are generated into ports/mocks with moq.
package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/ports_moq.go . Clock CatDirectory InteractionLog InteractionEraser RollupStore JobLock UsageCounter FeedbackRecorder

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
	// stores nothing and fails with errs.KindInvalid. An interaction with
	// an InteractionID already stored for its CAT (or yielded earlier by
	// the same sequence) is skipped: the log holds at most one interaction
	// per (Cat, InteractionID), also under concurrent Appends of the same
	// interactions. It returns how many interactions were stored, skipped
	// ones not counted. A concurrent Append of the same ids may fail with
	// a temporary errs.KindUnavailable error, having stored nothing; run
	// again, it skips what the other stored.
	Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error)
	Aggregator
}

// UsageCounter answers the usage and feedback of a selection, in total
// and grouped (/usage, /feedback), from one state of the store, equal to
// analytics.CountUsage, the reference. Groups come in no particular order.
type UsageCounter interface {
	CountUsage(ctx context.Context, q analytics.UsageQuery) (analytics.UsageCounts, error)
}

// FeedbackRecorder sets the feedback of one interaction of a CAT, named
// by its InteractionID (a chat turn's interaction is named by its
// assistant message's id); a zero Feedback removes it. Counts and the
// review queue see the change as soon as it returns. No such interaction
// is errs.KindNotFound; an invalid rating or comment, errs.KindInvalid.
type FeedbackRecorder interface {
	SetFeedback(ctx context.Context, cat, interactionID string, f analytics.Feedback) error
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

// JobLock lets one instance at a time run a background job (retention)
// when several share a database.
type JobLock interface {
	// TryLock takes the lock of the named job without waiting: ok is false
	// when another holder (in this process or another) has it. The caller
	// runs its pass and then calls release; a holder that dies releases
	// the lock with it.
	TryLock(ctx context.Context, job string) (release func(), ok bool, err error)
}

// RollupStore answers the same counts as InteractionLog from pre-aggregated
// rollups that every Append keeps in step.
type RollupStore interface {
	Aggregator
}
