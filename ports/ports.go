// Package ports declares the interfaces the core needs from the outside
// world, one role each. Adapters implement them; core services take them in
// their constructors.
//
// Mocks for isolating core logic are generated into ports/mocks with moq.
package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/ports_moq.go . Clock CatDirectory InteractionLog RollupStore TopAggregator

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

// Aggregator counts the api interactions of a selection. Implementations
// must agree exactly with analytics.CountTotal and analytics.CountGroups.
type Aggregator interface {
	// Total counts the interactions of the selection.
	Total(ctx context.Context, s analytics.Selection) (int64, error)
	// Groups counts the interactions of the selection per distinct
	// (key, text) of the dimension, in no particular order.
	Groups(ctx context.Context, s analytics.Selection, d analytics.Dimension) ([]analytics.Group, error)
}

// TopAggregator is an Aggregator that can also return only the first n
// groups of a dimension, in analytics.SortGroups order: exactly the first
// n entries that Groups, sorted, would give. The reporter uses it for the
// question and answer lists of a query with a limit, so an adapter that
// ranks cheaply need not materialize tens of thousands of groups the
// response would drop. Adapters implement it optionally.
type TopAggregator interface {
	Aggregator
	// TopGroups returns the first n (n > 0) groups of the selection for d.
	TopGroups(ctx context.Context, s analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error)
}

// SnapshotAggregator is an Aggregator whose reads can be held to one
// state of its rows: every call made with the context Snapshot returns,
// until release, counts the same rows, so that a result assembled from
// several calls never mixes counts from before a write with counts from
// after it. The calls may not write through the same store meanwhile.
// Adapters implement it optionally.
type SnapshotAggregator interface {
	Aggregator
	// Snapshot returns the context to make the calls with, and release,
	// which the caller must call once it has made them.
	Snapshot(ctx context.Context) (pinned context.Context, release func())
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

// RollupStore answers the same counts as InteractionLog from pre-aggregated
// rollups that every Append keeps in step.
type RollupStore interface {
	Aggregator
}
