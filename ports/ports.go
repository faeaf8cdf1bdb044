// Package ports declares the interfaces the core needs from the outside
// world, one role each. Adapters implement them; core services take them in
// their constructors.
//
// Mocks for isolating core logic are generated into ports/mocks with moq.
package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/ports_moq.go . Clock CatDirectory InteractionLog InteractionEraser RollupStore InteractionFeed FeedSnapshot DeletionFeed JobLock

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
	// Codes are the source's own codes of the row's topic, model,
	// persona, question and answer (their key and text), in that order,
	// when it has them (0 when not): within one read, rows of one CAT
	// with the same code in a dimension have the same key and text, so a
	// reader may code each value once. ReadSince gives none.
	Codes [5]uint64
	// CatRows is, from a FeedSnapshot, how many rows of the row's CAT the
	// snapshot holds (0 when unknown): a reader may size its storage for
	// them up front. ReadSince gives none.
	CatRows int
}

// InteractionFeed reads the api interactions stored since a position in
// the log: what a derived store (an in-process index) follows the log by.
// A feed whose rows can be deleted also implements DeletionFeed.
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

// Committed is what one of this process's write transactions added to an
// InteractionFeed, told once it has committed: its api rows, each with
// its id (the byte slices are the follower's to keep), and the feed
// position from which ReadSince has given them all: a follower whose
// position is GivenAt or beyond has them already. When Complete is false
// the transaction wrote too many rows to hand over (an import) and Rows
// is empty: a follower reads them from the feed.
type Committed struct {
	Rows     []FeedRow
	GivenAt  int64
	Complete bool
}

// CommitTeller is an InteractionFeed that tells a follower in the same
// process about that process's writes as they commit, before the write
// returns to its caller: the follower can count them at once instead of
// reading them back (and drop them when ReadSince gives them).
type CommitTeller interface {
	// TellCommits makes every later commit that wrote api rows call fn,
	// on the writer's goroutine, after the commit and before the write
	// returns. One fn at a time; nil stops telling.
	TellCommits(fn func(Committed))
}

// FeedSnapshot is the fast first read of an InteractionFeed: every api
// interaction of one committed state of the log, read from what the store
// keeps compactly (not row by row), and where to follow the feed from, so
// that a follower starting from a snapshot gets every committed row
// exactly once, as one starting from position 0 would.
type FeedSnapshot interface {
	// ReadSnapshot calls fn with every api interaction of one committed
	// state (FeedRow.ID is 0: the rows come without ids, in no particular
	// order) and returns the feed position to continue from with
	// ReadSince, and the rows of that state that ReadSince from that
	// position will give again, by id with their CAT: a follower drops
	// them when they come (and stops expecting a CAT's when it rebuilds
	// that CAT with ReadCat up to the position, which leaves them out).
	// It stops at fn's first error; after any error the reader drops
	// everything fn was given.
	ReadSnapshot(ctx context.Context, fn func(*FeedRow) error) (after int64, given map[int64]string, err error)
}

// DeletionFeed tells a follower of an InteractionFeed which rows it can
// no longer read: a feed whose rows can be deleted (InteractionEraser)
// implements it, and a follower that polls it before each ReadSince stays
// equal to the log. Every committed deletion batch that removes api rows
// gets a generation, increasing in commit order, and names
// the CATs that lost rows; a follower that sees a generation above the
// last it applied rebuilds those CATs (ReadCat, up to the feed position
// it had reached) from a read that starts after that generation was read, so it
// never keeps a deleted row nor misses a remaining one.
type DeletionFeed interface {
	// ReadDeletions returns the highest deletion generation above after
	// (after itself when none) and the CATs that lost api rows in the
	// deletions above after, sorted.
	ReadDeletions(ctx context.Context, after int64) (generation int64, cats []string, err error)
	// ReadCat calls fn with every api interaction of the CAT that a
	// reader of ReadSince had been given once it reached position upTo
	// (the rows committed before that position), from one read. It
	// stops at fn's first error.
	ReadCat(ctx context.Context, cat string, upTo int64, fn func(*FeedRow) error) error
}
