package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/browse_moq.go . InteractionBrowser

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// InteractionBrowser reads the raw interactions behind a selection, for the
// chat-log view and its exports. Implementations must agree exactly with
// chatlog.List and chatlog.Daily.
type InteractionBrowser interface {
	// List returns the selection's interactions after page.After, newest
	// first, ties broken by descending storage sequence number (unique per
	// store, growing with each Append), at most page.Limit of them; Next is
	// set when more follow.
	List(ctx context.Context, sel analytics.Selection, page chatlog.Page) (chatlog.Listing, error)
	// Daily counts the selection's interactions per UTC day, oldest first,
	// leaving out days without any.
	Daily(ctx context.Context, sel analytics.Selection) ([]chatlog.DayCount, error)
}
